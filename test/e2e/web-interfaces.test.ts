import crypto from 'crypto';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { env } from '../helpers/harness';
import { buildOrg, type TestOrg } from '../helpers/factories';
import { buildPlatformKey, adminCall, startAdmin } from '../helpers/admin';
import { buildOperator, WEB_PASSWORD } from '../helpers/web-client';
import { call } from '../helpers/http';
import { usageSettled } from '../helpers/usage';
import { launchBrowser, screenshots } from '../helpers/browser';
import { ApiKey, AuditLog, Membership, Plan, SearchOrgKey, SearchSetting, User } from '../../shared/db/models';
import { setPassword } from '../../shared/web/passwords';

/** The web password (the operators of buildOperator() have it too). */
const PASSWORD = WEB_PASSWORD;

async function buildMember(org: TestOrg, role: 'owner' | 'member'): Promise<User> {
  const u = await User.create({ email: `m-${crypto.randomBytes(4).toString('hex')}@example.com`, name: 'Member' });
  await setPassword(u, PASSWORD);
  await Membership.create({ orgId: org.org.id, userId: u.id, role });
  return u;
}

async function signInAt(page: Page, url: string, email: string, password = PASSWORD): Promise<number> {
  await page.goto(url);
  await page.fill('#email', email);
  await page.fill('#password', password);
  const [resp] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  return resp?.status() ?? 0;
}

describe('web interfaces in a browser (dashboard and operator console)', function () {
  this.timeout(60_000);
  let browser: Browser;
  let admin: { url: string; close(): Promise<void> };
  let org: TestOrg;
  let owner: User;
  let ctx: BrowserContext;
  let page: Page;
  const dash = () => `${env().gw.url}/dashboard`;

  before(async () => {
    browser = await launchBrowser();
    admin = await startAdmin();
    org = await buildOrg(env().redis);
    owner = await buildMember(org, 'owner');
    // One context and page for the file (a new page starts a renderer: a quarter of a second per test);
    // each test starts signed out (no cookies; the pages keep nothing else), on a blank page at 1280x800.
    ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await ctx.newPage();
  });
  beforeEach(async () => {
    await page.goto('about:blank');
    await ctx.clearCookies();
    await page.setViewportSize({ width: 1280, height: 800 });
  });
  after(async () => {
    await ctx?.close();
    await browser?.close();
    await admin?.close();
  });

  it('a member signs in, sees the traffic just sent in the usage chart, creates a key and uses it', async () => {
    const sent = await call('POST', '/v1/chat/completions', { headers: { authorization: `Bearer ${org.key}` }, json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] } });
    expect(sent.status).to.equal(200);
    await usageSettled();

    const signInPage = await page.goto(`${dash()}/sign-in`);
    expect(signInPage!.headers()['content-security-policy']).to.include("script-src 'self'");
    await screenshots(page, 'dashboard-sign-in');
    expect(await signInAt(page, `${dash()}/sign-in`, owner.email)).to.equal(200);
    expect(page.url()).to.equal(`${dash()}/o/${org.org.slug}`);
    const cookie = (await ctx.cookies()).find((c) => c.name === 'gw_dashboard')!;
    expect(cookie.httpOnly).to.equal(true);
    expect(cookie.sameSite).to.equal('Lax');
    const bar = page.locator('[data-test=requests-chart] svg rect title', { hasText: 'sim-chat (chat)' });
    expect(await bar.count()).to.be.greaterThan(0);
    expect(await bar.first().textContent()).to.match(/: 1$/);
    const totals = (await page.textContent('[data-test=usage-totals] tbody tr'))!;
    expect(totals).to.include('sim-chat').and.include('chat');
    expect(await page.locator('[data-test=usage-totals] tbody tr td').last().textContent()).to.match(/^\$(?!0\.00$)[\d,]+\.\d+$/); // cost at list prices, in dollars, not $0.00
    await screenshots(page, 'dashboard-usage');

    await page.click('text=API keys');
    await page.fill('#name', 'from the browser');
    await page.click('button:has-text("Create key")');
    const newKey = (await page.textContent('[data-test=new-key]'))!.trim();
    expect(newKey).to.match(/^svc_/);
    await screenshots(page, 'dashboard-keys');
    const used = await call('GET', '/v1/models', { headers: { authorization: `Bearer ${newKey}` } });
    expect(used.status).to.equal(200);
    await page.goto(`${dash()}/o/${org.org.slug}/keys`);
    expect(await page.locator('[data-test=new-key]').count()).to.equal(0); // shown once
    expect(await page.textContent('main')).to.include('from the browser');

    await page.click('text=Projects');
    await page.fill('#pname', 'Mobile app');
    await page.click('button:has-text("Create project")');
    expect(await page.textContent('main')).to.include('mobile-app');
    await screenshots(page, 'dashboard-projects');
    const viaHeader = await call('GET', '/v1/models', { headers: { authorization: `Bearer ${org.key}`, 'service-project-id': 'mobile-app' } });
    expect(viaHeader.status).to.equal(200);
  });

  it('usage over a chosen range by key and project, the models page, refused forms that keep what was typed; all usable 390 px wide', async () => {
    const sent = await call('POST', '/v1/chat/completions', { headers: { authorization: `Bearer ${org.key}` }, json: { model: 'sim-chat', messages: [{ role: 'user', content: 'range' }] } });
    expect(sent.status).to.equal(200);
    await usageSettled();
    await signInAt(page, `${dash()}/sign-in`, owner.email);
    const today = new Date().toISOString().slice(0, 10);
    const weekAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
    await page.fill('#ufrom', weekAgo);
    await page.fill('#uto', today);
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Show")')]);
    expect(page.url()).to.equal(`${dash()}/o/${org.org.slug}?from=${weekAgo}&to=${today}`);
    expect(await page.textContent('h1')).to.equal(`Usage, ${weekAgo} to ${today} (UTC)`);
    expect(await page.textContent('[data-test=usage-by-key] tbody')).to.match(/unnamed \(svc_/);
    expect(await page.textContent('[data-test=usage-by-project] tbody')).to.include('(none)');
    const costBar = page.locator('svg rect title', { hasText: `${today} sim-chat (chat): $` });
    expect(await costBar.count()).to.equal(1);
    await screenshots(page, 'dashboard-usage-range');
    // 390 px: nothing wider than the screen but the charts' scrolling bars, the navigation wrapped in view, the y axis shown
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(390);
    for (const box of await Promise.all((await page.locator('header a').all()).map((a) => a.boundingBox()))) expect(box!.x + box!.width).to.be.at.most(390);
    const axis = (await page.locator('[data-test=requests-chart] svg.yaxis').boundingBox())!;
    expect(axis.x).to.be.at.least(0);
    expect(axis.width).to.be.greaterThan(40);
    expect(await page.locator('[data-test=requests-chart] svg.yaxis text').first().isVisible()).to.equal(true);
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.click('header >> text=Models');
    expect(await page.textContent('tr[data-model="sim-chat"]')).to.include('$0.50 / 1M input tokens').and.include('128,000');
    // each price and each lane count stays on one line at 1280 px ("$0.50 / 1M input" then "tokens" was hard to read)
    const lines = `Array.from(document.querySelectorAll('tr[data-model="sim-chat"] td:is([data-test=prices], [data-test=lanes]) > span')).map((s) => [s.textContent, s.getClientRects().length])`;
    expect(await page.evaluate(lines)).to.deep.equal([['$0.50 / 1M input tokens', 1], ['$1.50 / 1M output tokens', 1], ['chat:interactive 16', 1], ['chat:background 8', 1]]);
    await screenshots(page, 'dashboard-models');

    await page.click('header >> text=API keys');
    await page.fill('#name', 'typed then refused');
    await page.fill('#expires_at', 'next tuesday');
    const [refused] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create key")')]);
    expect(refused!.status()).to.equal(400);
    expect(await page.inputValue('#name')).to.equal('typed then refused');
    expect(await page.inputValue('#expires_at')).to.equal('next tuesday');
    expect(await page.textContent('#expires_at-error')).to.equal('Expires must be an ISO 8601 date, such as 2027-01-31');
    await screenshots(page, 'dashboard-keys-refused');
    expect(await ApiKey.count({ where: { orgId: org.org.id, name: 'typed then refused' } })).to.equal(0);

    await page.click('header >> text=Projects');
    await page.fill('#pname', 'Duplicate');
    await page.fill('#pslug', 'proj');
    const [taken] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create project")')]);
    expect(taken!.status()).to.equal(409);
    expect(await page.inputValue('#pname')).to.equal('Duplicate');
    expect(await page.textContent('#slug-error')).to.include("slug 'proj' already exists");
    // the message under the slug does not lift the slug's input above the name's, nor the button off their line
    const tops = await Promise.all(['#pname', '#pslug', 'button:has-text("Create project")'].map(async (sel) => Math.round((await page.locator(sel).boundingBox())!.y)));
    expect(Math.abs(tops[0] - tops[1]), 'name and slug inputs level').to.be.at.most(1);
    expect(Math.abs(tops[0] - tops[2]), 'button level with the inputs').to.be.at.most(4);
    await screenshots(page, 'dashboard-projects-refused');
    await page.fill('#pslug', 'duplicate-two');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create project")')]);
    expect(await page.textContent('[data-test=saved]')).to.include('Project created.');
    expect(await page.evaluate("getComputedStyle(document.querySelector('[data-test=saved]')).backgroundColor"), 'the notice stands out from the white cards').not.to.equal('rgb(255, 255, 255)');
  });

  it('a form posted without its CSRF token is refused with 403 invalid_csrf_token and creates nothing', async () => {
    await signInAt(page, `${dash()}/sign-in`, owner.email);
    const before = await page.evaluate('document.cookie');
    const r = await page.evaluate(async (url) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=forged' });
      return { status: res.status, body: (await res.json()) as { error: { code: string } } };
    }, `${dash()}/o/${org.org.slug}/keys`);
    expect(before).to.equal(''); // HttpOnly: no cookie is visible to scripts
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('invalid_csrf_token');
    expect(await ApiKey.count({ where: { orgId: org.org.id, name: 'forged' } })).to.equal(0);
    // the same form submitted by the browser without its token: a 403 HTML page, nothing created
    await page.goto(`${dash()}/o/${org.org.slug}/keys`);
    await page.fill('#name', 'forged-in-browser');
    await page.evaluate("document.querySelectorAll('main input[name=_csrf]').forEach((e) => e.remove())");
    const [resp] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create key")')]);
    expect(resp!.status()).to.equal(403);
    expect(resp!.headers()['content-type']).to.match(/^text\/html/);
    expect(await page.getAttribute('[data-test=error-page]', 'data-code')).to.equal('invalid_csrf_token');
    expect(await page.textContent('[role=alert]')).to.include('without a valid CSRF token');
    await screenshots(page, 'dashboard-error-csrf');
    expect(await ApiKey.count({ where: { orgId: org.org.id, name: 'forged-in-browser' } })).to.equal(0);
  });

  it('wrong passwords are rate-limited (429 too_many_sign_in_attempts), and the right one is refused too while limited', async () => {
    const victim = await buildMember(org, 'member');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await signInAt(page, `${dash()}/sign-in`, victim.email, 'wrong password!'));
    expect(statuses).to.deep.equal([401, 401, 401, 401, 401]);
    expect(await page.textContent('[role=alert]')).to.include('Wrong email or password');
    await screenshots(page, 'dashboard-sign-in-error');
    expect(await signInAt(page, `${dash()}/sign-in`, victim.email)).to.equal(429);
    expect(await page.getAttribute('[data-test=error-page]', 'data-code')).to.equal('too_many_sign_in_attempts');
    expect(await page.textContent('h1')).to.equal('Too many attempts');
    await screenshots(page, 'dashboard-error-rate-limited');
  });

  it('an operator revokes a platform key in the console, and that key\'s next request fails', async () => {
    const op = await buildOperator();
    const k = await buildPlatformKey(['stats:read'], op);
    expect((await adminCall(admin.url, k.key, 'GET', '/admin/v1/stats')).status).to.equal(200);

    expect(await signInAt(page, `${admin.url}/sign-in`, op.email)).to.equal(200);
    await screenshots(page, 'console-organizations');
    const planForm = page.locator(`form[data-org="${org.org.slug}"]`);
    await planForm.locator('select').selectOption({ label: 'free' });
    await planForm.locator('button').click();
    expect((await Plan.findByPk((await org.org.reload()).planId!))!.name).to.equal('free');
    await page.click('header >> text=Platform keys');
    await screenshots(page, 'console-platform-keys');
    await page.click(`tr[data-key-id="${k.id}"] summary:has-text("Revoke")`); // it asks first
    await Promise.all([page.waitForNavigation(), page.click(`tr[data-key-id="${k.id}"] button[data-test=confirm]`)]);
    expect(await page.textContent(`tr[data-key-id="${k.id}"]`)).to.include('revoked');
    const after = await adminCall(admin.url, k.key, 'GET', '/admin/v1/stats');
    expect(after.status).to.equal(401);
    expect(after.body.error.code).to.equal('invalid_platform_key');

    for (const [tab, name] of [['Kill switches', 'console-switches'], ['Users', 'console-users'], ['Audit log', 'console-audit']] as const) {
      await page.click(`header >> text=${tab}`);
      await screenshots(page, name);
    }
    expect(await page.textContent('main')).to.include(`/admin/v1/platform-keys/${k.id}`);
    // a console page that does not exist is an error page inside the console: its tabs and sign-out stay
    expect((await page.goto(`${admin.url}/no-such-page`))!.status()).to.equal(404);
    expect(await page.getAttribute('[data-test=error-page]', 'data-code')).to.equal('not_found');
    expect(await page.locator('header >> text=Platform keys').count()).to.equal(1);
    expect(await page.locator('header button:has-text("Sign out")').count()).to.equal(1);
    // the queue dashboard opens under the same sign-in
    expect((await page.goto(`${admin.url}/admin/queues`))!.status()).to.equal(200);
  });

  it('an operator edits an organization\'s lane overrides in the console (validated, audited, applied)', async () => {
    const op = await buildOperator();
    await signInAt(page, `${admin.url}/sign-in`, op.email);
    const form = `form[data-lanes="${org.org.slug}"]`;
    await page.fill(`${form} input[name=lane_overrides]`, 'chat:interactive=3, images:background=1');
    const [saved] = await Promise.all([page.waitForNavigation(), page.click(`${form} button`)]);
    expect(saved!.status()).to.equal(200);
    expect((await org.org.reload()).laneOverrides).to.deep.equal({ 'chat:interactive': 3, 'images:background': 1 });
    expect(await page.inputValue(`${form} input[name=lane_overrides]`)).to.equal('chat:interactive=3, images:background=1');
    // the value shows whole at 1280 px (the field was cut off after "chat:interactive=3, image"), and the list says how it is written
    expect(await page.$eval(`${form} input[name=lane_overrides]`, (e) => e.scrollWidth <= e.clientWidth)).to.equal(true);
    expect(await page.textContent('main')).to.include('pairs separated by commas, e.g. chat:interactive=4, images:background=1');
    const audited = await AuditLog.findAll({ where: { targetId: org.org.id, actorId: op.id, path: `/admin/v1/organizations/${org.org.id}` } });
    expect(audited.map((a) => a.fields)).to.deep.include(['lane_overrides']);
    await screenshots(page, 'console-lane-overrides');
    expect(await page.textContent('[data-test=saved]')).to.include('Lane overrides saved.');
    // a bad pair is refused: the same page, the text as typed and the message after the field; nothing changes
    await page.fill(`${form} input[name=lane_overrides]`, 'chat:interactive=-2');
    const [bad] = await Promise.all([page.waitForNavigation(), page.click(`${form} button`)]);
    expect(bad!.status()).to.equal(400);
    expect(await page.inputValue(`${form} input[name=lane_overrides]`)).to.equal('chat:interactive=-2');
    expect(await page.getAttribute(`${form} input[name=lane_overrides]`, 'aria-invalid')).to.equal('true');
    expect(await page.textContent(`${form} [data-test=field-error-lane_overrides]`)).to.match(/not a pool:lane=count pair/);
    await screenshots(page, 'console-lane-overrides-refused');
    expect((await org.org.reload()).laneOverrides).to.deep.equal({ 'chat:interactive': 3, 'images:background': 1 });
    // cleared again through the same form
    await page.goto(`${admin.url}/`);
    await page.fill(`${form} input[name=lane_overrides]`, '');
    await Promise.all([page.waitForNavigation(), page.click(`${form} button`)]);
    expect((await org.org.reload()).laneOverrides).to.deep.equal({});
  });

  it('impersonation opens the user\'s dashboard marked as such, is audited, and cannot create keys', async () => {
    const op = await buildOperator();
    await signInAt(page, `${admin.url}/sign-in`, op.email);
    await page.goto(`${admin.url}/users`);
    await page.click(`tr[data-user="${owner.email}"] button:has-text("Impersonate")`);
    const link = (await page.getAttribute('[data-test=impersonation-link]', 'href'))!;
    await page.goto(`${env().gw.url}${new URL(link).pathname}${new URL(link).search}`);
    expect(page.url()).to.equal(`${dash()}/o/${org.org.slug}`);
    expect(await page.textContent('[data-test=impersonation-banner]')).to.include(`${op.email} is viewing as ${owner.email}`);
    await screenshots(page, 'dashboard-impersonation');
    const audited = await AuditLog.findAll({ where: { targetId: owner.id, actorId: op.id } });
    expect(audited.map((a) => a.path)).to.include.members([`/admin/v1/users/${owner.id}/impersonate`, '/dashboard/impersonate']);

    await page.click('text=API keys');
    const [resp] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create key")')]);
    expect(resp!.status()).to.equal(403);
    expect(await page.textContent('body')).to.include('impersonation_forbidden');
    // the ticket is one-use
    expect((await page.goto(`${env().gw.url}${new URL(link).pathname}${new URL(link).search}`))!.status()).to.equal(404);
  });

  it('an owner enables overage through the dialog (cancel changes nothing), sets a member cap and a provider key', async () => {
    const member = await buildMember(org, 'member');
    await signInAt(page, `${dash()}/sign-in`, owner.email);
    await page.click('header >> text=Web search');
    // the same setting is named alike in both forms that set it (one said "Searches per month")
    expect(await page.textContent('label[for=limit]')).to.equal(await page.textContent('label[for=olimit]'));
    await screenshots(page, 'dashboard-search');
    expect(await page.textContent('[data-test=overage-state]')).to.equal('off');

    await page.fill('#olimit', '2500');
    await page.click('button:has-text("Enable overage")');
    const dialog = page.locator('[data-test=overage-dialog]');
    expect(await dialog.isVisible()).to.equal(true);
    const text = (await dialog.textContent())!;
    expect(text).to.match(/free allowance is [\d,]+ searches a month/);
    expect(text).to.include('per search').and.include('monthly limit of 2,500');
    await screenshots(page, 'dashboard-search-dialog');
    expect((await SearchSetting.findOne({ where: { orgId: org.org.id } }))?.overageEnabled ?? false).to.equal(false); // not before confirm
    await page.click('[data-test=overage-cancel]');
    expect(await page.textContent('[data-test=overage-state]')).to.equal('off');
    expect((await SearchSetting.findOne({ where: { orgId: org.org.id } }))?.overageEnabled ?? false).to.equal(false);

    await page.fill('#olimit', '2500');
    await page.click('button:has-text("Enable overage")');
    await page.click('[data-test=overage-dialog] button:has-text("Confirm")');
    expect(await page.textContent('[data-test=overage-state]')).to.equal('on');
    const setting = (await SearchSetting.findOne({ where: { orgId: org.org.id } }))!;
    expect(setting).to.include({ overageEnabled: true, overageMonthlyLimit: 2500 });

    const row = page.locator(`tr[data-member="${member.email}"]`);
    await row.locator('input[name=cap]').fill('40');
    await row.locator('button:has-text("Save")').click();
    expect((await Membership.findOne({ where: { orgId: org.org.id, userId: member.id } }))!.searchCap).to.equal(40);

    await page.fill('#kkey', 'own-provider-key-9876');
    const provider = await page.inputValue('#kprov');
    await page.click('button:has-text("Set key")');
    expect(await page.textContent(`tr[data-provider-key="${provider}"]`)).to.include('…9876');
    expect(await page.content()).not.to.include('own-provider-key-9876'); // never shown again
    expect(await SearchOrgKey.count({ where: { orgId: org.org.id, provider } })).to.equal(1);
    await screenshots(page, 'dashboard-search-set');

    await page.click('button:has-text("Disable overage")'); // immediate, no dialog
    expect(await page.textContent('[data-test=overage-state]')).to.equal('off');
    const audited = await AuditLog.findAll({ where: { actorId: owner.id, family: 'search' } });
    expect(audited.map((a) => a.path)).to.include.members([`/dashboard/o/${org.org.slug}/search/overage`, `/dashboard/o/${org.org.slug}/search/keys`]);
  });

  it('a member who is not an owner sees no Web search link and is refused the page (403 owner_required)', async () => {
    const member = await buildMember(org, 'member');
    await signInAt(page, `${dash()}/sign-in`, member.email);
    expect(await page.locator('header >> text=Web search').count()).to.equal(0);
    const resp = await page.goto(`${dash()}/o/${org.org.slug}/search`);
    expect(resp!.status()).to.equal(403);
    expect(await page.getAttribute('[data-test=error-page]', 'data-code')).to.equal('owner_required');
    // the error page keeps the organization's chrome: its tabs (still no Web search for a member) and sign-out
    expect(await page.locator('header >> text=Usage').count()).to.equal(1);
    expect(await page.locator('header >> text=Web search').count()).to.equal(0);
    expect(await page.locator('header button:has-text("Sign out")').count()).to.equal(1);
    expect(await page.textContent('header .brand')).to.equal(org.org.name);
    const missing = await page.goto(`${dash()}/o/${org.org.slug}/no-such-page`);
    expect(missing!.status()).to.equal(404);
    expect(await page.getAttribute('[data-test=error-page]', 'data-code')).to.equal('not_found');
    expect(await page.locator('header >> text=Activity').count()).to.equal(1);
    await screenshots(page, 'dashboard-error-page');
    // the JSON clients of the same routes keep the envelope
    const json = await page.evaluate(async (url) => { const r = await fetch(url, { headers: { accept: 'application/json' } }); return { status: r.status, body: (await r.json()) as { error: { code: string } } }; }, `${dash()}/o/${org.org.slug}/search`);
    expect(json).to.deep.include({ status: 403 });
    expect(json.body.error.code).to.equal('owner_required');
  });
});
