import crypto from 'crypto';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { env } from '../helpers/harness';
import { buildOrg, type TestOrg } from '../helpers/factories';
import { buildWebMember, WEB_PASSWORD } from '../helpers/web-client';
import { call, keyHeader } from '../helpers/http';
import { usageSettled } from '../helpers/usage';
import { consoleOperator, pagePerTest, screenshots, signInAt as signInWith } from '../helpers/browser';

const signInAt = (page: Page, url: string, email: string) => signInWith(page, url, email, WEB_PASSWORD);
import { searchOrg } from '../integration/search/helpers';
import { ApiKey, InviteCode, Membership, Organization, PlatformKey, Project, SearchOrgKey, SearchSetting, User } from '../../shared/db/models';
import { createApiKey, updateKeyControls } from '../../shared/tenancy/ops';

/** Submits the form that holds `button` and answers the status of the page that comes back. */
async function submit(page: Page, button: string): Promise<number> {
  const [resp] = await Promise.all([page.waitForNavigation(), page.click(button)]);
  return resp?.status() ?? 0;
}

/** Lets a field hold what the browser's own checks (type=email, required) would not send, to see the server's refusal. */
const unchecked = (page: Page, selector: string) =>
  page.evaluate(`(() => { const el = document.querySelector(${JSON.stringify(selector)}); el.removeAttribute('required'); el.setAttribute('type', 'text'); })()`);

describe('refused forms keep what was typed (web search settings, members, console Create, platform keys) and the console organization page, in a browser', function () {
  this.timeout(90_000);
  const operator = consoleOperator();
  const current = pagePerTest(() => operator.browser);
  let page: Page;
  beforeEach(() => {
    page = current();
  });

  it('web search settings: each refused form comes back with its value and the message at its field; a save says it was saved', async () => {
    const o = await searchOrg({ monthlyAllowance: 100 });
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await o.member();
    const memberRow = `tr[data-member]:not([data-member="${owner.email}"])`;
    await signInAt(page, `${env().gw.url}/dashboard/sign-in`, owner.email);
    await page.goto(`${env().gw.url}/dashboard/o/${o.org.slug}/search`);

    await page.fill('#olimit', '60');
    expect(await submit(page, 'button:has-text("Enable overage")')).to.equal(400);
    expect(await page.inputValue('#olimit')).to.equal('60');
    expect(await page.getAttribute('#olimit', 'aria-invalid')).to.equal('true');
    expect(await page.textContent('#olimit ~ [data-test=field-error-monthly_limit]')).to.match(/could never apply with a monthly limit of 60/);
    expect(await page.locator('[data-test=overage-dialog]').count(), 'no dialog for a refused limit').to.equal(0);
    expect(await page.inputValue('#limit'), 'the other form is untouched').to.equal('');

    await page.fill('#limit', 'twelve');
    expect(await submit(page, 'button:has-text("Save limit")')).to.equal(400);
    expect(await page.inputValue('#limit')).to.equal('twelve');
    expect(await page.textContent('#limit ~ [data-test=field-error-monthly_limit]')).to.include('The monthly limit must be a whole number or empty.');
    expect(await page.inputValue('#olimit'), 'the refusal shows at its own form only').to.equal('');

    await page.fill(`${memberRow} input[name=cap]`, '4x');
    await page.uncheck(`${memberRow} input[name=enabled]`);
    expect(await submit(page, `${memberRow} button:has-text("Save")`)).to.equal(400);
    expect(await page.inputValue(`${memberRow} input[name=cap]`)).to.equal('4x');
    expect(await page.isChecked(`${memberRow} input[name=enabled]`), 'the switch as it was sent').to.equal(false);
    expect(await page.textContent(`${memberRow} [data-test=field-error-cap]`)).to.include('A cap must be a whole number or empty.');
    expect((await Membership.findOne({ where: { orgId: o.org.id, userId: member.userId } }))!.searchEnabled, 'nothing saved').to.equal(true);

    const provider = (await page.locator('#kprov option').last().textContent())!;
    await page.selectOption('#kprov', provider);
    await page.fill('#kkey', 'a b');
    expect(await submit(page, 'button:has-text("Set key")')).to.equal(400);
    expect(await page.inputValue('#kprov')).to.equal(provider);
    expect(await page.textContent('[data-test=field-error-api_key]')).to.include('4-4096 characters without spaces');
    expect(await page.inputValue('#kkey'), 'a key is never echoed').to.equal('');
    await screenshots(page, 'dashboard-search-refused');
    expect(await SearchOrgKey.count({ where: { orgId: o.org.id } })).to.equal(0);

    await page.fill('#limit', '500');
    expect(await submit(page, 'button:has-text("Save limit")')).to.equal(200);
    expect(await page.textContent('[data-test=saved]')).to.include('Monthly limit saved.');
    expect((await SearchSetting.findOne({ where: { orgId: o.org.id } }))!.overageMonthlyLimit).to.equal(500);
    await screenshots(page, 'dashboard-search-saved');
  });

  it('members page: a refused invitation keeps the email and role; demoting the last owner says why at the role; a change says it was saved', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const other = await buildWebMember(o.org.id, 'member');
    await signInAt(page, `${env().gw.url}/dashboard/sign-in`, owner.email);
    await page.goto(`${env().gw.url}/dashboard/o/${o.org.slug}/members`);
    await unchecked(page, '#email');
    await page.fill('#email', 'not-an-address');
    await page.selectOption('#role', 'owner');
    expect(await submit(page, 'button:has-text("Create invitation")')).to.equal(400);
    expect(await page.inputValue('#email')).to.equal('not-an-address');
    expect(await page.inputValue('#role')).to.equal('owner');
    expect(await page.textContent('[data-test=field-error-email]')).to.include('Enter a valid email address');
    expect(await InviteCode.count({ where: { orgId: o.org.id } })).to.equal(0);

    await page.selectOption(`#role-${owner.id}`, 'member');
    expect(await submit(page, `tr[data-user="${owner.id}"] button:has-text("Change role")`)).to.equal(409);
    expect(await page.inputValue(`#role-${owner.id}`)).to.equal('member');
    expect(await page.textContent(`tr[data-user="${owner.id}"] [data-test=field-error-role]`)).to.include('at least one owner');
    await screenshots(page, 'dashboard-members-refused');
    expect((await Membership.findOne({ where: { orgId: o.org.id, userId: owner.id } }))!.role).to.equal('owner');

    await page.selectOption(`#role-${other.id}`, 'owner');
    expect(await submit(page, `tr[data-user="${other.id}"] button:has-text("Change role")`)).to.equal(200);
    expect(await page.textContent('[data-test=saved]')).to.include('Role changed.');
    expect((await Membership.findOne({ where: { orgId: o.org.id, userId: other.id } }))!.role).to.equal('owner');
  });

  it('console Create: a taken slug, a bad email and a bad invitation keep every field with the message at the field; platform keys keep the name', async () => {
    const existing = await buildOrg(env().redis);
    const target = await buildOrg(env().redis);
    await operator.signIn(page);
    await page.goto(`${operator.admin.url}/create`);
    await page.fill('#oname', 'Acme <Labs>');
    await page.fill('#oslug', existing.org.slug);
    await page.selectOption('#oplan', 'free');
    expect(await submit(page, 'button:has-text("Create organization")')).to.equal(409);
    expect([await page.inputValue('#oname'), await page.inputValue('#oslug'), await page.inputValue('#oplan')]).to.deep.equal(['Acme <Labs>', existing.org.slug, 'free']);
    expect(await page.textContent('[data-test=field-error-slug]')).to.include(`slug '${existing.org.slug}' already exists`);
    expect(await page.inputValue('#uemail'), 'the other forms stay empty').to.equal('');
    await screenshots(page, 'console-create-refused');
    expect(await Organization.count({ where: { name: 'Acme <Labs>' } })).to.equal(0);

    await unchecked(page, '#uemail');
    await page.fill('#uemail', 'nobody');
    await page.fill('#uname', 'No Body');
    expect(await submit(page, 'button:has-text("Create user")')).to.equal(400);
    expect([await page.inputValue('#uemail'), await page.inputValue('#uname')]).to.deep.equal(['nobody', 'No Body']);
    expect(await page.textContent('#uemail ~ [data-test=field-error-email]')).to.include('Enter a valid email address.');
    expect(await page.inputValue('#oname'), 'the organization form is fresh again').to.equal('');

    await unchecked(page, '#iemail');
    await page.selectOption('#iorg', target.org.slug);
    await page.fill('#iemail', 'still not@');
    await page.selectOption('#irole', 'owner');
    expect(await submit(page, 'button:has-text("Create invitation")')).to.equal(400);
    expect([await page.inputValue('#iorg'), await page.inputValue('#iemail'), await page.inputValue('#irole')]).to.deep.equal([target.org.slug, 'still not@', 'owner']);
    expect(await page.textContent('#iemail ~ [data-test=field-error-email]')).to.include('Enter a valid email address.');
    expect(await InviteCode.count({ where: { orgId: target.org.id } })).to.equal(0);

    const name = `created-${crypto.randomBytes(3).toString('hex')}`;
    await page.fill('#oname', name);
    expect(await submit(page, 'button:has-text("Create organization")')).to.equal(201);
    expect(await page.textContent('[data-test=created]')).to.include(`Organization ${name}`);

    await page.goto(`${operator.admin.url}/keys`);
    await page.fill('#kname', 'scopeless');
    expect(await submit(page, 'button:has-text("Create key")')).to.equal(400);
    expect(await page.inputValue('#kname')).to.equal('scopeless');
    expect(await page.textContent('[data-test=field-error-scopes]')).to.include('Choose at least one known scope.');
    expect(await PlatformKey.count({ where: { name: 'scopeless' } })).to.equal(0);
    await screenshots(page, 'console-platform-keys-refused');
  });

  it("the console's organization page: members, keys (never a secret) with their limits, projects, usage, search settings and lane overrides", async () => {
    const o: TestOrg = await searchOrg({ monthlyAllowance: 250, overageEnabled: true, overageMonthlyLimit: 900 });
    const owner = await buildWebMember(o.org.id, 'owner');
    const limited = await createApiKey(env().redis, { orgId: o.org.id, name: 'limited key' });
    await updateKeyControls(env().redis, limited.id, { allowedModels: ['sim-chat'], rpm: 30, budgetMicros: 5_000_000, budgetPeriod: 'month' });
    const p = (await Project.findOne({ where: { orgId: o.org.id } }))!;
    await p.update({ budgetMicros: 7_000_000, budgetPeriod: 'day' });
    await o.org.update({ laneOverrides: { 'chat:interactive': 5 } });
    for (let i = 0; i < 3; i++) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: `hello ${i}` }] } });
      expect(r.status, r.text).to.equal(200);
    }
    await usageSettled();

    await operator.signIn(page);
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/orgs/${o.org.id}"]`)]);
    expect(page.url()).to.equal(`${operator.admin.url}/orgs/${o.org.id}`);
    expect(await page.textContent('h1')).to.include(o.org.name);
    expect(await page.textContent('[data-section=members]')).to.include(owner.email).and.include('owner');
    const keyRow = page.locator(`[data-section=keys] tr[data-key-id="${limited.id}"]`);
    expect(await keyRow.textContent()).to.include('limited key').and.include(`${(await ApiKey.findByPk(limited.id))!.prefix}…`).and.include('models: sim-chat').and.include('30 req/min').and.include('$5.00 per month');
    expect(await page.content(), 'no secret on the page').not.to.include(limited.key).and.not.include(o.key);
    expect(await keyRow.locator('td[data-label=Project]').textContent(), 'a key bound to no project reads as on the dashboard').to.equal('any');
    expect(await page.textContent('[data-section=projects]')).to.include(p.name).and.include('$7.00 per day');
    expect(await page.textContent('[data-section=usage]')).to.match(/days3 requests · /);
    expect(await page.locator('[data-section=usage] svg').count()).to.be.at.least(1);
    // on a phone the chart keeps its y axis in view (the dashboard's chart styles) and the page is no wider than the screen
    await page.setViewportSize({ width: 390, height: 844 });
    const axis = await page.locator('[data-section=usage] svg.yaxis').boundingBox();
    expect(axis!.width, 'the y axis keeps its narrow column').to.be.below(80);
    expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await page.textContent('[data-section=search]')).to.include('monthly allowance: 250').and.include('overage: on').and.include('monthly limit: 900');
    expect(await page.inputValue('[data-section=lanes] input[name=lane_overrides]')).to.equal('chat:interactive=5');
    await screenshots(page, 'console-org');

    // its lane overrides form answers on this page: refused with the text kept, then saved
    await page.fill('[data-section=lanes] input[name=lane_overrides]', 'chat:interactive=five');
    expect(await submit(page, '[data-section=lanes] button')).to.equal(400);
    expect(page.url()).to.equal(`${operator.admin.url}/orgs/${o.org.id}/lanes`);
    expect(await page.inputValue('[data-section=lanes] input[name=lane_overrides]')).to.equal('chat:interactive=five');
    expect(await page.textContent('[data-section=lanes] [data-test=field-error-lane_overrides]')).to.include("'chat:interactive=five' is not a pool:lane=count pair.");
    expect(await page.textContent('[data-section=members]'), 'still the organization page').to.include(owner.email);
    await page.fill('[data-section=lanes] input[name=lane_overrides]', 'chat:interactive=6');
    expect(await submit(page, '[data-section=lanes] button')).to.equal(200);
    expect(page.url()).to.equal(`${operator.admin.url}/orgs/${o.org.id}?saved=lanes`);
    expect(await page.textContent('[data-test=saved]')).to.include('Lane overrides saved.');
    expect((await o.org.reload()).laneOverrides).to.deep.equal({ 'chat:interactive': 6 });
    expect(await User.count({ where: { id: owner.id } })).to.equal(1);
  });
});
