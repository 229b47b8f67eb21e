import fs from 'fs';
import { expect } from 'chai';
import { env, resetSim } from '../helpers/harness';
import { buildOrg } from '../helpers/factories';
import { call, keyHeader } from '../helpers/http';
import { usageSettled } from '../helpers/usage';
import { consoleOperator, screenshots } from '../helpers/browser';

describe("console's Activity page in a browser: an operator reads an org's request log", function () {
  this.timeout(60_000);
  const operator = consoleOperator();
  beforeEach(resetSim);

  it('from the org page: every request newest first (a model listing too), filtered to the failed one, its details, the CSV of the page', async () => {
    const o = await buildOrg(env().redis);
    const send = (json: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json });
    for (let i = 0; i < 2; i++) expect((await send({ model: 'sim-chat', messages: [{ role: 'user', content: `hello ${i}` }] })).status).to.equal(200);
    const models = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
    expect(models.status).to.equal(200);
    const failed = await send({ model: 'sim-chat' });
    expect(failed.status).to.equal(400);
    await usageSettled();

    const ctx = await operator.browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    const page = await ctx.newPage();
    await operator.signIn(page);
    await page.goto(`${operator.admin.url}/orgs/${o.org.id}`);
    await Promise.all([page.waitForNavigation(), page.click('[data-test=org-activity]')]);
    expect(page.url()).to.equal(`${operator.admin.url}/orgs/${o.org.id}/activity`);
    const rows = page.locator('[data-test=activity] tbody tr');
    expect(await rows.count()).to.equal(4);
    expect(await rows.first().getAttribute('data-request-id'), 'newest first').to.equal(failed.headers.get('x-service-request-id'));
    expect(await rows.nth(1).getAttribute('data-request-id'), 'the model listing has its row').to.equal(models.headers.get('x-service-request-id'));
    expect(await rows.nth(1).locator('td[data-label=Model]').textContent(), 'a row without a model says so').to.equal('—');
    await screenshots(page, 'console-activity');

    await page.selectOption('#astatus', 'error');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Filter")')]);
    expect(await rows.count()).to.equal(1);
    expect(await rows.first().getAttribute('data-request-id')).to.equal(failed.headers.get('x-service-request-id'));

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-test=activity-csv]')]);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    expect(csv).to.have.length(2);
    expect(csv[0].split(',')).to.include('batch_id');
    expect(csv[1]).to.include(failed.headers.get('x-service-request-id')!);

    await Promise.all([page.waitForNavigation(), rows.first().locator('a').click()]);
    expect(await page.textContent('[data-field=status]')).to.equal('400');
    expect(await page.textContent('[data-field=error_code]')).to.equal(failed.body.error.code);
    await screenshots(page, 'console-activity-detail');
    await ctx.close();
  });
});
