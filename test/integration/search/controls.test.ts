import { expect } from 'chai';
import { execFile, spawn } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { resetSim, env } from '../../helpers/harness';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { AuditLog, Membership, SearchOrgKey, SearchSetting, User } from '../../../shared/db/models';
import { decrypt } from '../../../shared/crypto';
import { waitFor } from '../../helpers/wait';
import { buildOrg } from '../../helpers/factories';
import { searchOrg, search, searches, expectSearchError } from './helpers';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (args: string[], extraEnv: Record<string, string> = {}) => run(process.execPath, [cli, ...args], { env: { ...process.env, ...extraEnv } });

describe('web search controls: management API, billing line, and the gateway CLI', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  before(async () => {
    admin = await startAdmin();
  });
  after(() => admin.close());
  beforeEach(resetSim);

  it('the generic /search-settings CRUD cannot turn overage on without a monthly limit (nor remove the limit while it is on)', async () => {
    const o = await buildOrg(env().redis);
    const { key } = await buildPlatformKey(['search:write', 'search:read']);
    const refused = await adminCall(admin.url, key, 'POST', '/admin/v1/search-settings', { org_id: o.org.id, overage_enabled: true });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body.error.code).to.equal('invalid_request');
    expect(await SearchSetting.count({ where: { orgId: o.org.id } })).to.equal(0);
    const created = await adminCall(admin.url, key, 'POST', '/admin/v1/search-settings', { org_id: o.org.id, monthly_allowance: 5 });
    expect(created.status, created.text).to.equal(201);
    const item = `/admin/v1/search-settings/${created.body.id}`;
    const patchOn = await adminCall(admin.url, key, 'PATCH', item, { overage_enabled: true });
    expect(patchOn.status, patchOn.text).to.equal(400);
    expect(patchOn.body.error.code).to.equal('invalid_request');
    expect((await SearchSetting.findOne({ where: { orgId: o.org.id } }))!.overageEnabled).to.equal(false);
    const on = await adminCall(admin.url, key, 'PATCH', item, { overage_enabled: true, overage_monthly_limit: 7 });
    expect(on.status, on.text).to.equal(200);
    const unlimit = await adminCall(admin.url, key, 'PATCH', item, { overage_monthly_limit: null });
    expect(unlimit.status, unlimit.text).to.equal(400);
    const row = (await SearchSetting.findOne({ where: { orgId: o.org.id } }))!;
    expect([row.overageEnabled, row.overageMonthlyLimit]).to.deep.equal([true, 7]);
  });

  it('PUT overage needs a monthly limit to turn on; off takes effect on the next search; every write is audited once', async () => {
    const o = await searchOrg({ monthlyAllowance: 1 });
    const { key } = await buildPlatformKey(['search:write', 'billing:read']);
    const url = `/admin/v1/search-settings/orgs/${o.org.id}/overage`;
    const bad = await adminCall(admin.url, key, 'PUT', url, { enabled: true });
    expect(bad.status, bad.text).to.equal(400);
    const on = await adminCall(admin.url, key, 'PUT', url, { enabled: true, monthly_limit: 3 });
    expect(on.status, on.text).to.equal(200);
    expect(on.body).to.deep.include({ enabled: true, monthly_limit: 3 });
    expect(await searches(o.key, 4)).to.deep.equal([200, 200, 200, 429]);
    const bill = await adminCall(admin.url, key, 'GET', `/admin/v1/billing/search-overage?org_id=${o.org.id}`);
    expect(bill.status, bill.text).to.equal(200);
    expect(bill.body).to.deep.include({ status: 'accruing', overage_amount_micros: 10000 });
    expect(bill.body.searches).to.deep.equal({ allowance: 1, overage: 2, own_key: 0 });
    expect(bill.body.lines).to.deep.equal([{ provider: 'brave', kind: 'search', quantity: 2, amount_micros: 10000 }]);
    const off = await adminCall(admin.url, key, 'PUT', url, { enabled: false });
    expect(off.body).to.deep.include({ enabled: false, monthly_limit: 3 });
    // the management API writes its audit entry when the response has finished: wait for the third
    await waitFor(async () => (await AuditLog.count({ where: { path: url } })) >= 3);
    const audits = await AuditLog.findAll({ where: { path: url } });
    expect(audits.map((a) => a.status).sort()).to.deep.equal([200, 200, 400]);
  });

  it('PUT members sets a cap and the switch; GET shows the effective controls and own keys without the key', async () => {
    const o = await searchOrg({ monthlyAllowance: 50 });
    const m = await o.member();
    const { key } = await buildPlatformKey(['search:write']);
    const put = await adminCall(admin.url, key, 'PUT', `/admin/v1/search-settings/orgs/${o.org.id}/members/${m.userId}`, { cap: 1 });
    expect(put.body).to.deep.include({ cap: 1, enabled: true });
    expect(await searches(m.key, 2)).to.deep.equal([200, 429]);
    await adminCall(admin.url, key, 'PUT', `/admin/v1/search-settings/orgs/${o.org.id}/members/${m.userId}`, { enabled: false, cap: null });
    const off = await search(m.key, { query: 'q' });
    expectSearchError(off, 429, 'quota_exceeded');
    // not retryable before the period ends: no Retry-After, and the SDKs told not to retry
    expect([off.headers.get('retry-after'), off.headers.get('x-should-retry')]).to.deep.equal([null, 'false']);
    const setKey = await adminCall(admin.url, key, 'PUT', `/admin/v1/search-settings/orgs/${o.org.id}/keys/exa`, { api_key: 'exa-own-key-9876' });
    expect(setKey.body).to.deep.include({ provider: 'exa', last4: '9876' });
    const got = await adminCall(admin.url, key, 'GET', `/admin/v1/search-settings/orgs/${o.org.id}`);
    expect(got.body).to.deep.include({ monthly_allowance: 50, overage_enabled: false, monthly_limit: null });
    expect(got.body.usage.total).to.equal(1);
    expect(got.text).not.to.contain('exa-own-key-9876');
    expect(got.body.own_keys[0]).to.deep.include({ provider: 'exa', last4: '9876' });
    const unknown = await adminCall(admin.url, key, 'PUT', `/admin/v1/search-settings/orgs/${o.org.id}/keys/nope`, { api_key: 'abcd1234' });
    expect(unknown.status).to.equal(400);
    const ro = await buildPlatformKey(['search:read']);
    expect((await adminCall(admin.url, ro.key, 'PUT', `/admin/v1/search-settings/orgs/${o.org.id}/overage`, { enabled: false })).status).to.equal(403);
  });

  it('DELETE of an own key that is not there is 404 naming the provider cut at 40 characters (a path segment may be thousands long)', async () => {
    const o = await buildOrg(env().redis);
    const { key } = await buildPlatformKey(['search:write', 'search:read']);
    const long = 'x'.repeat(3000);
    const r = await adminCall(admin.url, key, 'DELETE', `/admin/v1/search-settings/orgs/${o.org.id}/keys/${long}`);
    expect([r.status, r.body.error.code, r.body.error.message]).to.deep.equal([404, 'not_found', `No own key for '${'x'.repeat(40)}'.`]);
  });

  it('the OpenAPI document describes the search controls and the billing line', async () => {
    const r = await fetch(`${admin.url}/admin/v1/openapi.json`);
    const doc = (await r.json()) as { paths: Record<string, Record<string, unknown>> };
    const v1 = (p: string) => `/admin/v1${p}`;
    expect(doc.paths).to.include.keys(v1('/search-settings/orgs/{orgId}/overage'), v1('/search-settings/orgs/{orgId}/members/{userId}'), v1('/search-settings/orgs/{orgId}/keys/{provider}'), v1('/billing/search-overage'));
    expect(doc.paths[v1('/search-settings/orgs/{orgId}/keys/{provider}')]).to.include.keys('put', 'delete');
    expect(JSON.stringify(doc.paths[v1('/search-providers')])).to.contain('fetch_price_micros');
  });

  it('gateway search-keys set (--api-key, SERVICE_SEARCH_API_KEY), list (last four only), remove; the org from --org or SERVICE_API_KEY', async () => {
    const o = await searchOrg({ monthlyAllowance: 0 });
    const set = await gateway(['search-keys', 'set', '--provider', 'brave', '--api-key', 'cli-brave-key-4321', '--org', o.org.slug]);
    expect(set.stdout).to.contain('…4321');
    const row = await SearchOrgKey.findOne({ where: { orgId: o.org.id, provider: 'brave' } });
    expect(row!.keyEncrypted).not.to.contain('cli-brave-key-4321');
    expect(decrypt(row!.keyEncrypted)).to.equal('cli-brave-key-4321');
    expect((await search(o.key, { query: 'q' })).body.usage.key_source).to.equal('own');
    expect(env().sim.log.entries[0].subscriptionToken).to.equal('cli-brave-key-4321');
    await gateway(['search-keys', 'set', '--provider', 'tavily'], { SERVICE_API_KEY: o.key, SERVICE_SEARCH_API_KEY: 'tvly-from-env-8765' });
    const list = await gateway(['search-keys', 'list'], { SERVICE_API_KEY: o.key });
    expect(list.stdout).to.match(/brave\s+…4321/).and.match(/tavily\s+…8765/);
    expect(list.stdout).not.to.contain('cli-brave-key');
    await gateway(['search-keys', 'remove', 'brave', '--org', o.org.id]);
    expect(await SearchOrgKey.count({ where: { orgId: o.org.id } })).to.equal(1);
    const noOrg = await gateway(['search-keys', 'list'], { SERVICE_API_KEY: '', SERVICE_ORG: '' }).catch((e: { code: number; stderr: string }) => e);
    expect((noOrg as { code: number }).code).to.equal(1);
    expect((noOrg as { stderr: string }).stderr).to.contain('which organization');
    expect(await AuditLog.count({ where: { targetId: `${o.org.id}/brave`, actorType: 'cli' } })).to.equal(2);
  });

  it('gateway search-keys set prompts without echo in a terminal; without a terminal and no key it refuses', async () => {
    const o = await searchOrg();
    const r = await gateway(['search-keys', 'set', '--provider', 'exa', '--org', o.org.slug], { SERVICE_SEARCH_API_KEY: '' }).catch((e: { code: number; stderr: string }) => e);
    expect((r as { code: number }).code).to.equal(1);
    expect((r as { stderr: string }).stderr).to.contain('--api-key');
    // a pseudo-terminal (util-linux `script`): the typed key must not come back on the terminal
    const cmd = `${process.execPath} ${cli} search-keys set --provider exa --org ${o.org.slug}`;
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, SERVICE_SEARCH_API_KEY: '' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('API key:') && !child.stdin.writableEnded) child.stdin.end('typed-secret-5555\r');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, out).to.equal(0);
    expect(out).to.contain('…5555');
    expect(out).not.to.contain('typed-secret');
    const row = await SearchOrgKey.findOne({ where: { orgId: o.org.id, provider: 'exa' } });
    expect(decrypt(row!.keyEncrypted)).to.equal('typed-secret-5555');
  });

  it('gateway key create --user makes a member key; gateway search member/overage set caps, switches and overage', async () => {
    const o = await searchOrg({ monthlyAllowance: 5 });
    const user = await User.create({ email: `cli-${o.org.slug}@example.com`, name: 'M' });
    await Membership.create({ orgId: o.org.id, userId: user.id, role: 'member' });
    const k = await gateway(['key', 'create', '--org', o.org.slug, '--user', user.email, '--json']);
    const memberKey = (JSON.parse(k.stdout) as { key: string }).key;
    await gateway(['search', 'member', user.email, '--cap', '1', '--org', o.org.slug]);
    expect(await searches(memberKey, 2)).to.deep.equal([200, 429]);
    await gateway(['search', 'member', user.email, '--off', '--cap', 'none', '--org', o.org.slug]);
    expect((await Membership.findOne({ where: { orgId: o.org.id, userId: user.id } }))!.searchEnabled).to.equal(false);
    expectSearchError(await search(memberKey, { query: 'q' }), 429, 'quota_exceeded');
    const bad = await gateway(['search', 'overage', 'on', '--org', o.org.slug]).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { stderr: string }).stderr).to.contain('monthly limit');
    await gateway(['search', 'overage', 'on', '--limit', '10', '--org', o.org.slug]);
    expect((await SearchSetting.findOne({ where: { orgId: o.org.id } }))!.overageEnabled).to.equal(true);
    const notMember = await gateway(['key', 'create', '--org', o.org.slug, '--user', 'nobody@example.com']).catch((e: { code: number }) => e);
    expect((notMember as { code: number }).code).to.equal(1);
  });
});
