import fs from 'fs';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { env, resetSim } from '../helpers/harness';
import { buildOrg } from '../helpers/factories';
import { call, keyHeader } from '../helpers/http';
import { usageSettled } from '../helpers/usage';
import { buildWebMember, WEB_PASSWORD } from '../helpers/web-client';
import { launchBrowser, screenshots } from '../helpers/browser';
import { createApiKey } from '../../shared/tenancy/ops';

describe('Activity page in a browser: filter, open a request, export', function () {
  this.timeout(60_000);
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(() => browser?.close());
  beforeEach(resetSim);

  it('a member filters to the failed requests of one key, opens one, and the CSV link exports that page', async () => {
    const o = await buildOrg(env().redis);
    const second = await createApiKey(env().redis, { orgId: o.org.id, name: 'batch jobs' });
    const send = (key: string, json: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json });
    for (let i = 0; i < 3; i++) expect((await send(o.key, { model: 'sim-chat', messages: [{ role: 'user', content: `hello ${i}` }] })).status).to.equal(200);
    expect((await send(second.key, { model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'streamed' }] })).status).to.equal(200);
    const failed = await send(second.key, { model: 'sim-chat' });
    expect(failed.status).to.equal(400);
    await usageSettled();
    const member = await buildWebMember(o.org.id, 'member');

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    const page = await ctx.newPage();
    await page.goto(`${env().gw.url}/dashboard/sign-in`);
    await page.fill('#email', member.email);
    await page.fill('#password', WEB_PASSWORD);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    await Promise.all([page.waitForNavigation(), page.click('header a:has-text("Activity")')]);
    expect(await page.locator('[data-test=activity] tbody tr').count()).to.equal(5);
    // at 1280 px a row's time, model and duration each keep to one line ("2026-12-" / "05" / "08:34:13", "sim-" / "chat", "140" / "ms"), and the table still fits its card
    const lines = `Array.from(document.querySelectorAll('[data-test=activity] tbody tr')).flatMap((tr) => ['Time', 'Model', 'Total'].map((l) => {
      const r = document.createRange();
      r.selectNodeContents(tr.querySelector('td[data-label=' + l + ']'));
      return l + ' ' + new Set(Array.from(r.getClientRects()).map((x) => Math.round(x.top))).size;
    }))`;
    expect(new Set((await page.evaluate(lines)) as string[])).to.deep.equal(new Set(['Time 1', 'Model 1', 'Total 1']));
    expect(await page.$eval('[data-test=activity]', (t) => t.closest('.card')!.scrollWidth <= t.closest('.card')!.clientWidth)).to.equal(true);
    await screenshots(page, 'dashboard-activity');

    await page.selectOption('#akey', second.id);
    await page.selectOption('#astatus', 'error');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Filter")')]);
    const rows = page.locator('[data-test=activity] tbody tr');
    expect(await rows.count()).to.equal(1);
    expect(await rows.first().getAttribute('data-request-id')).to.equal(failed.headers.get('x-service-request-id'));
    expect(await page.inputValue('#astatus')).to.equal('error'); // the form keeps the filter

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-test=activity-csv]')]);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    expect(csv).to.have.length(2);
    expect(csv[1]).to.include(failed.headers.get('x-service-request-id')!);

    await Promise.all([page.waitForNavigation(), rows.first().locator('a').click()]);
    expect(await page.textContent('[data-field=status]')).to.equal('400');
    expect(await page.textContent('[data-field=api_key_id]')).to.match(/^batch jobs \(/);
    await screenshots(page, 'dashboard-activity-detail');

    // a hand-edited filter: the page, the field marked, its message read out; not an error page
    const refused = await page.goto(`${env().gw.url}/dashboard/o/${o.org.slug}/activity?status=7xx&model=sim`);
    expect(refused!.status()).to.equal(400);
    expect(await page.locator('[data-test=error-page]').count()).to.equal(0);
    expect(await page.getAttribute('#astatus', 'aria-invalid')).to.equal('true');
    expect(await page.textContent('[data-test=field-error-status]')).to.match(/^status: /);
    expect(await page.inputValue('#amodel')).to.equal('sim');
    expect(await page.locator('[data-test=activity-csv]').count()).to.equal(0); // it would download the refusal, not rows
    await screenshots(page, 'dashboard-activity-refused');
    await ctx.close();
  });
});
