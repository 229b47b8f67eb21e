import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { env } from '../helpers/harness';
import { buildOrg } from '../helpers/factories';
import { buildWebMember, WEB_PASSWORD } from '../helpers/web-client';
import { consoleOperator, pagePerTest, signInAt } from '../helpers/browser';
import { createApiKey, createProject } from '../../shared/tenancy/ops';
import { ApiKey } from '../../shared/db/models';

/**
 * The form controls of every page a person reaches have a name a screen reader reads out: a
 * `<label for>` around or tied to them, or an aria-label; every button says what it does.
 */
/** Runs in the page (no DOM types here): the controls without a name, as the start of their markup. */
const UNNAMED = `(() => {
  const text = (n) => ((n && n.textContent) || '').trim() !== '';
  const out = [];
  for (const e of document.querySelectorAll('input, select, textarea, button')) {
    if (e.type === 'hidden') continue;
    const labelled = Array.from(e.labels || []).some(text) || (e.getAttribute('aria-label') || '').trim() !== ''
      || (e.getAttribute('aria-labelledby') || '').split(/\\s+/).some((id) => text(document.getElementById(id)));
    if (!(labelled || (e.tagName === 'BUTTON' && text(e)))) out.push(e.outerHTML.slice(0, 160));
  }
  return out;
})()`;
const unnamedControls = (page: Page) => page.evaluate(UNNAMED) as Promise<string[]>;

/** Runs in the page: the text inputs whose placeholder is cut off by the box (the example is unreadable). */
const CUT_PLACEHOLDERS = `(() => {
  const ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  for (const e of document.querySelectorAll('input[placeholder]')) {
    const cs = getComputedStyle(e);
    ctx.font = cs.font;
    const room = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (e.checkVisibility() && ctx.measureText(e.placeholder).width > room + 1) out.push(e.outerHTML.slice(0, 160));
  }
  return out;
})()`;

/** At 1280 and at 390 px: a page or a card wider than the screen (it scrolls sideways), and inputs whose example is cut off. */
async function layoutFaults(page: Page, name: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    const over = ((await page.evaluate('document.documentElement.scrollWidth')) as number) - width;
    if (over > 0) out[`${name} wider than ${width} px`] = [`by ${over} px`];
    const scrolling = (await page.evaluate(`Array.from(document.querySelectorAll('main .card')).filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.outerHTML.slice(0, 120))`)) as string[];
    if (scrolling.length) out[`${name} cards scrolling sideways at ${width} px`] = scrolling;
    const cut = (await page.evaluate(CUT_PLACEHOLDERS)) as string[];
    if (cut.length) out[`${name} placeholder cut off at ${width} px`] = cut;
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  return out;
}

describe('dashboard and console pages read well in a browser: named controls, unbroken dates, no sideways scrolling', function () {
  this.timeout(120_000);
  const suite = consoleOperator();
  const page = pagePerTest(() => suite.browser);

  it('every form control of an owner\'s dashboard pages and the operator\'s console pages has a name; none is wider than the screen at 1280 or 390 px or cuts its example off', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    await buildWebMember(o.org.id, 'member');
    await createApiKey(env().redis, { orgId: o.org.id, name: 'labelled' });
    await createProject(env().redis, o.org.id, 'Labelled', 'labelled');
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    const found: Record<string, string[]> = {};
    const dash = `${env().gw.url}/dashboard/o/${o.org.slug}`;
    for (const p of ['', '/activity', '/models', '/keys', '/projects', '/members', '/search']) {
      await page().goto(`${dash}${p}`);
      found[`dashboard${p || '/'}`] = await unnamedControls(page());
      Object.assign(found, await layoutFaults(page(), `dashboard${p || '/'}`));
    }
    await suite.signIn(page());
    for (const p of ['/', `/orgs/${o.org.id}`, `/orgs/${o.org.id}/activity`, '/create', '/keys', '/switches', '/users', '/pools', '/audit']) {
      await page().goto(`${suite.admin.url}${p}`);
      found[`console${p}`] = await unnamedControls(page());
      Object.assign(found, await layoutFaults(page(), `console${p}`));
    }
    expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length))).to.deep.equal({});
  });

  it('a key\'s creation date stays on one line at 1280 px, even beside a rotated key\'s grace note', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    await createApiKey(env().redis, { orgId: o.org.id, userId: owner.id, name: 'the owner\'s' }); // an email in the Owner column
    await ApiKey.update({ lastUsedAt: new Date() }, { where: { id: o.keyId } }); // a last-used time
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}/keys`);
    await page().click(`tr[data-actions-of="${o.keyId}"] summary:has-text("Rotate")`);
    await Promise.all([page().waitForNavigation(), page().click(`tr[data-actions-of="${o.keyId}"] button[data-test=confirm]`)]);
    await page().click(`tr[data-actions-of="${o.keyId}"] summary:has-text("Edit limits")`);
    // the lines a date's text runs over (the element that holds it, or the cell's first text)
    const lines = (cell: string, at: string) => page().evaluate(`(() => {
      const td = document.querySelector('tr[data-key-id="${o.keyId}"] ${cell}');
      const r = document.createRange();
      r.selectNodeContents(td.querySelector('${at}') || td.firstChild);
      return new Set(Array.from(r.getClientRects()).map((x) => Math.round(x.top))).size;
    })()`);
    expect(await lines('td[data-label=Created]', '.nowrap')).to.equal(1);
    expect(await lines('[data-test=grace]', '.nowrap')).to.equal(1); // old secret until 2026-12-05 18:46
    expect(await lines('td[data-label="Last used"]', '.nowrap')).to.equal(1);

  });

  it('a row\'s repeated buttons and boxes say whose they are (members page, web search members)', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}/search`);
    for (const who of [owner.email, member.email]) {
      expect(await page().getByRole('button', { name: `Save the search settings of ${who}`, exact: true }).count(), who).to.equal(1);
      expect(await page().getByRole('checkbox', { name: `on for ${who}`, exact: true }).count(), who).to.equal(1);
    }
    expect(await page().getByRole('button', { name: 'Save', exact: true }).count()).to.equal(0);
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}/members`);
    for (const who of [owner.email, member.email]) expect(await page().getByRole('button', { name: `Change role of ${who}`, exact: true }).count(), who).to.equal(1);
    // what a sighted person sees is unchanged
    const extra = (await page().locator(`tr[data-user="${member.id}"] button:has-text("Change role") .sr-only`).boundingBox())!;
    expect(extra.width * extra.height).to.be.at.most(1);
  });
});
