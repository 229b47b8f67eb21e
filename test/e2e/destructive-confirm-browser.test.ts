import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { env, resetSim } from '../helpers/harness';
import { buildOrg, type TestOrg } from '../helpers/factories';
import { call, keyHeader } from '../helpers/http';
import { usageSettled } from '../helpers/usage';
import { buildWebMember, WEB_PASSWORD } from '../helpers/web-client';
import { consoleOperator, pagePerTest, screenshots, signInAt } from '../helpers/browser';
import { ApiKey, Membership, User } from '../../shared/db/models';
import { setPassword } from '../../shared/web/passwords';
import { createApiKey } from '../../shared/tenancy/ops';

/** The page's forms that revoke, remove, archive, delete, promote or demote without asking first. */
const UNCONFIRMED = `[...document.querySelectorAll('form')].filter((f) => /\\/(revoke|remove|archive|delete|promote|demote)$/.test(f.getAttribute('action') || '') && !f.closest('details.confirm'))
  .map((f) => f.getAttribute('action'))`;

/** Cells of a table with a header that a phone would show without their column's name (the row's first cell names the row). */
const UNLABELLED = `[...document.querySelectorAll('table')].filter((t) => t.tHead).flatMap((t) => [...t.tBodies[0].rows].flatMap((r) =>
  [...r.cells].slice(1).filter((c) => c.colSpan === 1 && !c.hasAttribute('data-label') && !c.classList.contains('figures') && c.innerText.trim() && !c.querySelector('form, details'))
    .map((c) => c.innerText.trim().slice(0, 40))))`;

async function expectTidy(page: Page, what: string): Promise<void> {
  expect(await page.evaluate(UNCONFIRMED), `${what}: destructive forms that post at once`).to.deep.equal([]);
  expect(await page.evaluate(UNLABELLED), `${what}: cells without a label on a phone`).to.deep.equal([]);
}

describe('destructive actions ask first, and the tables read on a laptop and a phone (dashboard and console)', function () {
  this.timeout(60_000);
  const suite = consoleOperator();
  const page = pagePerTest(() => suite.browser);
  let o: TestOrg;
  let owner: User;
  let member: User;
  before(async () => {
    o = await buildOrg(env().redis);
    // an owner with a long email and a member's key with a budget of a few millionths: the widest cells the table has
    owner = await User.create({ email: `a.rather.long.address.of.the.owner-${o.org.slug}@subdomain.example-company.example`, name: 'Owner' });
    await setPassword(owner, WEB_PASSWORD);
    await Membership.create({ orgId: o.org.id, userId: owner.id, role: 'owner' });
    member = await buildWebMember(o.org.id, 'member');
    await createApiKey(env().redis, { orgId: o.org.id, userId: member.id, createdBy: owner.id, projectId: o.project.id, name: 'member key', controls: { rpm: 600, tpm: 200_000, budgetMicros: 20, budgetPeriod: 'total', allowedModels: ['sim-chat', 'sim-embed'], expiresAt: new Date(Date.now() + 30 * 86_400_000) } });
    resetSim();
    expect((await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } })).status).to.equal(200);
    await usageSettled();
  });

  it('dashboard: revoking a key takes a second, confirming click; the key table fits 1280 px; the chart keeps its first and last day labels', async () => {
    const p = page();
    const base = `${env().gw.url}/dashboard/o/${o.org.slug}`;
    await signInAt(p, `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    // the x axis' first and last labels were centred on their bars and ran past the plot, cut in half
    const [plot, first, last] = await p.evaluate(`(() => { const svg = document.querySelector('[data-test=requests-chart] .scroll svg'); const t = svg.querySelectorAll('text');
      return [svg.getBoundingClientRect(), t[0].getBoundingClientRect(), t[t.length - 1].getBoundingClientRect()].map((r) => [r.left, r.right]); })()`) as number[][];
    expect(first[0]).to.be.at.least(plot[0] - 0.5);
    expect(last[1]).to.be.at.most(plot[1] + 0.5);

    await p.goto(`${base}/keys`);
    const [table, card] = await p.evaluate(`(() => { const t = document.querySelector('table[data-test=keys]'); return [t.scrollWidth, t.closest('.card').clientWidth]; })()`) as number[];
    expect(table, 'no column hidden past the card').to.be.at.most(card);
    await expectTidy(p, 'keys');
    const key = (await ApiKey.findOne({ where: { orgId: o.org.id, name: 'member key' } }))!;
    expect(await p.textContent(`tr[data-key-id="${key.id}"] [data-test=key-budget]`)).to.equal('$0.00 spent, $0.00 reserved of $0.00002 in total; $0.00002 left');
    await p.click(`tr[data-actions-of="${key.id}"] summary:has-text("Revoke")`);
    expect(await p.textContent(`tr[data-actions-of="${key.id}"] details[data-confirm$="/revoke"] .confirm-body`)).to.include('refused at once');
    await screenshots(p, 'dashboard-keys-confirm');
    expect((await key.reload()).revokedAt, 'opening the question revokes nothing').to.equal(null);
    await Promise.all([p.waitForNavigation(), p.click(`tr[data-actions-of="${key.id}"] details[data-confirm$="/revoke"] button[data-test=confirm]`)]);
    expect((await key.reload()).revokedAt).to.not.equal(null);

    await p.goto(`${base}/search`);
    await p.fill('#kkey', 'own-provider-key-0123456789');
    await Promise.all([p.waitForNavigation(), p.click('button:has-text("Set key")')]);
    for (const tab of ['projects', 'members', 'search']) {
      await p.goto(`${base}/${tab}`);
      await expectTidy(p, tab);
    }
  });

  it('console: deleting, promoting or demoting a user and revoking a platform key ask first', async () => {
    const p = page();
    await suite.signIn(p);
    for (const path of ['/users', '/keys', '/']) {
      await p.goto(`${suite.admin.url}${path}`);
      await expectTidy(p, path);
    }
    await p.goto(`${suite.admin.url}/users`);
    const row = p.locator(`tr[data-user="${member.email}"]`);
    await row.locator('summary:has-text("Delete")').click();
    expect(await row.locator('details[data-confirm$="/delete"] .confirm-body').textContent()).to.include('can no longer sign in');
    expect((await member.reload()).deletedAt).to.equal(null);
    await Promise.all([p.waitForNavigation(), row.locator('details[data-confirm$="/delete"] button[data-test=confirm]').click()]);
    expect((await member.reload()).deletedAt).to.not.equal(null);
  });
});
