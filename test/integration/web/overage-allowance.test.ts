import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { resetSim } from '../../helpers/harness';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, dashboardAs } from '../../helpers/web-client';
import { searchOrg } from '../search/helpers';
import { SearchSetting } from '../../../shared/db/models';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const WHY = /could never apply with a monthly limit of \d+: .*first 100 are the free allowance.*above 100/;

const state = async (orgId: string) => {
  const s = await SearchSetting.findOne({ where: { orgId } });
  return [s?.overageEnabled ?? false, s?.overageMonthlyLimit ?? null];
};

/** Paid overage with a monthly limit at or below the free allowance could never apply: refused alike everywhere, with the reason. */
describe('overage on needs a monthly limit above the free allowance (page, management API, CLI)', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  before(async () => {
    admin = await startAdmin();
  });
  after(() => admin.close());
  beforeEach(resetSim);

  it('the dashboard refuses it before the dialog and at confirmation, with the reason on the page; the limit form too while overage is on', async () => {
    const o = await searchOrg({ monthlyAllowance: 100 });
    const owner = await buildWebMember(o.org.id, 'owner');
    const web = await dashboardAs(owner);
    const b = `/dashboard/o/${o.org.slug}/search`;
    expect((await web.get(b)).text).to.include('must be above the free allowance (100)');
    for (const form of [{ enabled: 'true', monthly_limit: '50' }, { enabled: 'true', monthly_limit: '100', confirm: 'yes' }] as Array<Record<string, string>>) {
      const page = await web.post(`${b}/overage`, form);
      expect(page.status, JSON.stringify(form)).to.equal(400);
      expect(page.headers['content-type']).to.match(/^text\/html/);
      expect(page.text).to.match(WHY).and.not.include('data-test="overage-dialog"');
      const json = await web.post(`${b}/overage`, form, { json: true });
      expect(json.status).to.equal(400);
      expect(json.body.error).to.include({ code: 'invalid_request' });
      expect(json.body.error.message).to.match(WHY);
    }
    expect(await state(o.org.id)).to.deep.equal([false, null]);
    expect((await web.post(`${b}/overage`, { enabled: 'true', monthly_limit: '101' })).text).to.include('data-test="overage-dialog"');
    expect((await web.post(`${b}/overage`, { enabled: 'true', monthly_limit: '101', confirm: 'yes' })).status).to.equal(303);
    expect(await state(o.org.id)).to.deep.equal([true, 101]);
    await web.get(b);
    const lowered = await web.post(`${b}/limit`, { monthly_limit: '80' }, { json: true });
    expect(lowered.status).to.equal(400);
    expect(lowered.body.error.message).to.match(WHY);
    expect(await state(o.org.id)).to.deep.equal([true, 101]);
  });

  it('the management API refuses it on PUT overage and on the generic /search-settings CRUD (limit, or an allowance raised past it)', async () => {
    const o = await searchOrg({ monthlyAllowance: 100 });
    const { key } = await buildPlatformKey(['search:write', 'search:read']);
    const url = `/admin/v1/search-settings/orgs/${o.org.id}/overage`;
    const low = await adminCall(admin.url, key, 'PUT', url, { enabled: true, monthly_limit: 40 });
    expect(low.status, low.text).to.equal(400);
    expect(low.body.error.code).to.equal('invalid_request');
    expect(low.body.error.message).to.match(WHY);
    expect(await state(o.org.id)).to.deep.equal([false, null]);
    expect((await adminCall(admin.url, key, 'PUT', url, { enabled: true, monthly_limit: 150 })).status).to.equal(200);
    const id = (await SearchSetting.findOne({ where: { orgId: o.org.id } }))!.id;
    const item = `/admin/v1/search-settings/${id}`;
    const patch = await adminCall(admin.url, key, 'PATCH', item, { overage_monthly_limit: 90 });
    expect(patch.status, patch.text).to.equal(400);
    expect(patch.body.error.message).to.match(WHY);
    const raised = await adminCall(admin.url, key, 'PATCH', item, { monthly_allowance: 200 });
    expect(raised.status, raised.text).to.equal(400);
    expect(raised.body.error.message).to.match(/first 200 are the free allowance/);
    expect(await state(o.org.id)).to.deep.equal([true, 150]);
    // with overage off a low limit is a plain cap on all searches, and allowed
    expect((await adminCall(admin.url, key, 'PUT', url, { enabled: false, monthly_limit: 20 })).status).to.equal(200);
  });

  it('gateway search overage on --limit refuses it with the reason (exit 1); the plan allowance counts when the org sets none', async function () {
    this.timeout(30_000);
    const o = await searchOrg({ monthlyAllowance: null }, { web_search_allowance: 100 });
    const bad = await run(process.execPath, [cli, 'search', 'overage', 'on', '--limit', '60', '--org', o.org.slug]).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).to.equal(1);
    expect((bad as { stderr: string }).stderr).to.match(WHY);
    expect(await state(o.org.id)).to.deep.equal([false, null]);
    const ok = await run(process.execPath, [cli, 'search', 'overage', 'on', '--limit', '300', '--org', o.org.slug]);
    expect(ok.stdout).to.include('paid overage on, monthly limit 300');
  });
});
