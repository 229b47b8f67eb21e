import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { ApiKey } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { roomInMinute, waitFor } from '../../helpers/wait';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });
const chat = (key: string, base?: string) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, base });

describe('key controls: rate limits across pods, the CLI and the management API', () => {
  let second: TestGateway;
  before(async () => {
    second = await startGateway();
  });
  after(async () => {
    await second.close();
  });
  beforeEach(resetSim);

  it('holds a key to its requests per minute across two pods: 429 rate_limit_exceeded with Retry-After', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { rpm: 3 });
    // the four requests must fall in one minute window: start with at least 10 s of it left
    expect(await roomInMinute()).to.equal(true);
    const first = await Promise.all([chat(o.key), chat(o.key, second.url), chat(o.key)]);
    expect(first.map((r) => r.status)).to.deep.equal([200, 200, 200]);
    const r = await chat(o.key, second.url);
    expect(r.status).to.equal(429);
    expect(r.body.error.code).to.equal('rate_limit_exceeded');
    const retry = Number(r.headers.get('retry-after'));
    expect(retry).to.be.within(1, 60);
  });

  it('holds a key to its tokens per minute: input counted before the call, output added from usage', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    // one small request counts about 14 input tokens: two fit in 30 unless the first one's output is added
    await updateKeyControls(env().redis, o.keyId, { tpm: 30 });
    expect(await roomInMinute()).to.equal(true);
    const long = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'word '.repeat(100) }] } });
    expect(long.status, 'over the minute on its input alone').to.equal(429);
    expect(long.body.error.code).to.equal('rate_limit_exceeded');
    // it can never fit a minute: no Retry-After, and the SDKs are told not to retry
    expect([long.headers.get('retry-after'), long.headers.get('x-should-retry')]).to.deep.equal([null, 'false']);
    env().sim.knobs.set('sim-chat-1', { outputWords: 40 });
    const first = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', max_tokens: 40, messages: [{ role: 'user', content: 'hi' }] } });
    expect(first.status, first.text).to.equal(200);
    expect(first.body.usage.completion_tokens).to.be.at.least(20);
    await usageSettled();
    // the first request's input fit; its output, added when its usage was written, fills the minute
    const after = await chat(o.key, second.url);
    expect(after.status, after.text).to.equal(429);
  });

  it('gateway key create takes --models, --rpm, --tpm, --budget-usd, --budget-period and --expires; bad values exit non-zero naming the field', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const k = JSON.parse((await gateway('key', 'create', '--org', o.org.slug, '--models', 'sim-chat,sim-embed', '--rpm', '10', '--tpm', '5000', '--budget-usd', '2.5', '--budget-period', 'day', '--expires', expires, '--json')).stdout);
    const row = (await ApiKey.findByPk(k.id))!;
    expect(row.allowedModels).to.deep.equal(['sim-chat', 'sim-embed']);
    expect(row).to.include({ rpm: 10, tpm: 5000, budgetMicros: 2_500_000, budgetPeriod: 'day' });
    expect(row.expiresAt!.toISOString()).to.equal(expires);
    expect(row.lastUsedAt, 'never used yet').to.equal(null);
    expect((await chat(k.key)).status).to.equal(200);
    expect(await waitFor(async () => (await ApiKey.findByPk(k.id))!.lastUsedAt !== null), 'last used is written').to.equal(true);
    const refused = await call('POST', '/v1/chat/completions', { headers: keyHeader(k.key), json: { model: 'sim-claude', messages: [{ role: 'user', content: 'x' }] } });
    expect(refused.body.error.code).to.equal('model_not_allowed');
    try {
      await gateway('key', 'create', '--org', o.org.slug, '--budget-period', 'week', '--budget-usd', '1');
      expect.fail('should exit non-zero');
    } catch (err) {
      expect((err as { stderr: string }).stderr).to.include('budget_period');
    }
    await gateway('key', 'update', k.id, '--models', '');
    expect((await ApiKey.findByPk(k.id))!.allowedModels).to.equal(null);
  });

  it('the management API creates, edits and shows the controls with spent, reserved and remaining', async () => {
    const admin = await startAdmin();
    try {
      const { key: token } = await buildPlatformKey();
      const o = await buildOrg(env().redis);
      const created = await adminCall(admin.url, token, 'POST', `/admin/v1/organizations/${o.org.id}/api-keys`, { org_wide: true, allowed_models: ['sim-chat'], budget_usd: 1, budget_period: 'month' });
      expect(created.status, created.text).to.equal(201);
      expect(created.body).to.include({ budget_usd: 1, budget_period: 'month', rpm: null });
      expect(created.body.budget).to.include({ limit_usd: 1, spent_usd: 0, reserved_usd: 0, remaining_usd: 1 });
      const patched = await adminCall(admin.url, token, 'PATCH', `/admin/v1/organizations/${o.org.id}/api-keys/${created.body.id}`, { rpm: 7, expires_at: '2030-01-01T00:00:00Z' });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body).to.include({ rpm: 7, expires_at: '2030-01-01T00:00:00.000Z', budget_usd: 1 });
      const bad = await adminCall(admin.url, token, 'PATCH', `/admin/v1/organizations/${o.org.id}/api-keys/${created.body.id}`, { budget_period: 'week' });
      expect(bad.status).to.equal(400);

      // a project's budget, set through the API, refuses the requests of its keys
      const proj = await adminCall(admin.url, token, 'PATCH', `/admin/v1/organizations/${o.org.id}/projects/${o.project.slug}`, { budget_usd: 0.000001, budget_period: 'day' });
      expect(proj.status, proj.text).to.equal(200);
      expect(proj.body.budget).to.include({ limit_usd: 0.000001, period: 'day', spent_usd: 0 });
      const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'SERVICE-PROJECT-ID': o.project.slug }, json: { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] } });
      expect(r.status).to.equal(402);
      expect(r.body.error.message).to.contain("project's budget");
      expect((await chat(o.key)).status, 'without the project the key is not limited').to.equal(200);
    } finally {
      await admin.close();
    }
  });
});
