import crypto from 'crypto';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { env } from '../helpers/harness';
import { buildOrg, type TestOrg } from '../helpers/factories';
import { startAdmin } from '../helpers/admin';
import { buildOperator, buildWebMember, WEB_PASSWORD } from '../helpers/web-client';
import { launchBrowser, screenshots, signInAt as signInWith } from '../helpers/browser';
import { Membership, User } from '../../shared/db/models';
import { readSwitches, setSwitch } from '../../shared/switches/switches';

const signInAt = (page: Page, url: string, email: string) => signInWith(page, url, email, WEB_PASSWORD);

describe('members and invitations in a browser (dashboard members page, invitation page, console confirmation)', function () {
  this.timeout(60_000);
  let browser: Browser;
  let org: TestOrg;
  let owner: User;
  const contexts: BrowserContext[] = [];
  const newPage = async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(ctx);
    return ctx.newPage();
  };

  before(async () => {
    browser = await launchBrowser();
    org = await buildOrg(env().redis);
    owner = await buildWebMember(org.org.id, 'owner');
  });
  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close();
  });
  after(() => browser?.close());

  it('an owner invites by email, the invitee sets a password and lands in the org; the used link shows a clear page; the owner removes them', async () => {
    const page = await newPage();
    await signInAt(page, `${env().gw.url}/dashboard/sign-in`, owner.email);
    await Promise.all([page.waitForNavigation(), page.click('a[href$="/members"]')]);
    expect(page.url()).to.equal(`${env().gw.url}/dashboard/o/${org.org.slug}/members`);
    const invitee = `b-${crypto.randomBytes(4).toString('hex')}@example.com`;
    await page.fill('#email', invitee);
    await page.selectOption('#role', 'member');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create invitation")')]);
    expect(await page.textContent('[data-test=notice]')).to.include(invitee);
    const link = (await page.locator('[data-test=invite-link]').first().textContent())!.trim();
    await screenshots(page, 'dashboard-members');

    const guest = await newPage();
    const opened = await guest.goto(link.replace(/^https?:\/\/[^/]+/, env().gw.url));
    expect(opened!.status()).to.equal(200);
    expect(await guest.inputValue('#email')).to.equal(invitee);
    await screenshots(guest, 'dashboard-invite');
    await guest.fill('#password', 'short');
    await guest.evaluate("document.querySelector('#password').removeAttribute('minlength')");
    await Promise.all([guest.waitForNavigation(), guest.click('button[type=submit]')]);
    expect(await guest.textContent('[role=alert]')).to.include('at least 10 characters');
    await guest.fill('#password', WEB_PASSWORD);
    await Promise.all([guest.waitForNavigation(), guest.click('button[type=submit]')]);
    expect(guest.url()).to.equal(`${env().gw.url}/dashboard/o/${org.org.slug}`);
    const joined = (await User.findOne({ where: { email: invitee } }))!;
    expect((await Membership.findOne({ where: { orgId: org.org.id, userId: joined.id } }))!.role).to.equal('member');

    const usedPage = await newPage();
    const again = await usedPage.goto(link.replace(/^https?:\/\/[^/]+/, env().gw.url));
    expect(again!.status()).to.equal(410);
    expect(await usedPage.textContent('h1')).to.equal('No longer valid');
    expect(await usedPage.textContent('[role=alert]')).to.include('already been used');
    await screenshots(usedPage, 'dashboard-invite-used');

    await page.goto(`${env().gw.url}/dashboard/o/${org.org.slug}/members`);
    await page.click(`tr[data-user="${joined.id}"] summary:has-text("Remove")`); // it asks first
    await Promise.all([page.waitForNavigation(), page.click(`tr[data-user="${joined.id}"] button[data-test=confirm]`)]);
    expect(await page.content()).not.to.include(invitee);
    expect(await Membership.count({ where: { orgId: org.org.id, userId: joined.id } })).to.equal(0);
  });

  it('the only owner who tries to leave is told why on the members page, under their Remove button, not on an error page', async () => {
    const alone = await buildOrg(env().redis);
    const only = await buildWebMember(alone.org.id, 'owner');
    const page = await newPage();
    await signInAt(page, `${env().gw.url}/dashboard/sign-in`, only.email);
    await page.goto(`${env().gw.url}/dashboard/o/${alone.org.slug}/members`);
    await page.click(`tr[data-user="${only.id}"] summary:has-text("Remove")`);
    const [refused] = await Promise.all([page.waitForNavigation(), page.click(`tr[data-user="${only.id}"] button:has-text("Leave the organization")`)]);
    expect(refused!.status()).to.equal(409);
    expect(await page.locator('[data-test=error-page]').count()).to.equal(0);
    expect(page.url()).to.equal(`${env().gw.url}/dashboard/o/${alone.org.slug}/members/${only.id}/remove`);
    const message = page.locator(`tr[data-user="${only.id}"] [data-test=field-error-remove]`);
    expect(await message.getAttribute('role')).to.equal('alert');
    expect(await message.textContent()).to.include('keeps at least one owner');
    expect(await page.locator('h1').textContent()).to.equal('Members'); // the page, its navigation and forms
    await screenshots(page, 'dashboard-members-last-owner');
    expect((await Membership.findOne({ where: { orgId: alone.org.id, userId: only.id } }))!.role).to.equal('owner');
  });

  it('the console asks for confirmation before a kill switch for every organization, and creates an invitation', async () => {
    const admin = await startAdmin();
    try {
      const op = await buildOperator();
      const page = await newPage();
      await signInAt(page, `${admin.url}/sign-in`, op.email);
      await page.goto(`${admin.url}/switches`);
      // it asks first, so its button ends in "…" like every other button that asks first
      expect(await page.textContent('form[action="/switches/image_generation"] button')).to.equal('Engage…');
      await Promise.all([page.waitForNavigation(), page.click('form[action="/switches/image_generation"] button')]);
      expect(await page.textContent('[data-test=confirm-switch]')).to.include('every organization');
      await screenshots(page, 'console-switch-confirm');
      expect((await readSwitches(env().redis)).image_generation).to.equal(false);
      await Promise.all([page.waitForNavigation(), page.click('text=Confirm: engage for every organization')]);
      expect((await readSwitches(env().redis)).image_generation).to.equal(true);
      await setSwitch(env().redis, 'image_generation', false);

      await page.goto(`${admin.url}/create`);
      await page.selectOption('#iorg', org.org.slug);
      await page.fill('#iemail', `c-${crypto.randomBytes(4).toString('hex')}@example.com`);
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create invitation")')]);
      expect(await page.textContent('[data-test=link]')).to.match(/\/dashboard\/invite\/[A-Za-z0-9_-]+$/);
      await screenshots(page, 'console-create');
    } finally {
      await setSwitch(env().redis, 'image_generation', false);
      await admin.close();
    }
  });
});
