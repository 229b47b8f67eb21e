import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, dashboardAs } from '../../helpers/web-client';
import { usageSettled } from '../../helpers/usage';
import { ApiKey, UsageEvent } from '../../../shared/db/models';
import { updateKeyControls } from '../../../shared/tenancy/ops';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });
const models = (key: string) => call('GET', '/v1/models', { headers: keyHeader(key) });
const newKeyOf = (page: string) => /data-test="new-key">([^<]+)</.exec(page)?.[1] ?? '';

describe('key rotation with a grace period', () => {
  beforeEach(resetSim);

  it('the CLI rotates a key: both secrets work during the grace, as the same key with the same limits and usage', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { allowedModels: ['sim-chat'] });
    const out = JSON.parse((await gateway('key', 'rotate', o.keyId, '--grace', '600', '--json')).stdout);
    expect(out.id).to.equal(o.keyId);
    expect(out.key).to.match(/^svc_/).and.not.equal(o.key);
    for (const key of [o.key, out.key]) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] } });
      expect(r.status, r.text).to.equal(200);
      const refused = await call('POST', '/v1/embeddings', { headers: keyHeader(key), json: { model: 'sim-embed', input: 'x' } });
      expect(refused.body.error.code, 'the limits carry over').to.equal('model_not_allowed');
    }
    await usageSettled();
    expect(await UsageEvent.count({ where: { apiKeyId: o.keyId } }), 'both billed to the one key').to.equal(2);
  });

  it('the management API rotates with no grace: the old secret answers 401 INVALID_API_KEY at once, saying it was rotated', async () => {
    const admin = await startAdmin();
    try {
      const { key: token } = await buildPlatformKey();
      const o = await buildOrg(env().redis);
      const r = await adminCall(admin.url, token, 'POST', `/admin/v1/organizations/${o.org.id}/api-keys/${o.keyId}/rotate`, { grace_seconds: 0 });
      expect(r.status, r.text).to.equal(200);
      expect((await models(r.body.key)).status).to.equal(200);
      const old = await models(o.key);
      expect(old.status).to.equal(401);
      expect(old.body.error.code).to.equal('INVALID_API_KEY');
      expect(old.body.error.message).to.contain('rotated');
      const bad = await adminCall(admin.url, token, 'POST', `/admin/v1/organizations/${o.org.id}/api-keys/${o.keyId}/rotate`, { grace_seconds: -5 });
      expect(bad.status).to.equal(400);
    } finally {
      await admin.close();
    }
  });

  it('a member rotates their own key on the dashboard and sees the new secret once', async () => {
    const o = await buildOrg(env().redis);
    const member = await buildWebMember(o.org.id, 'member');
    const web = await dashboardAs(member);
    const page = `/dashboard/o/${o.org.slug}/keys`;
    await web.get(page);
    const created = await web.post(page, { name: 'mine' });
    const mine = (await ApiKey.findOne({ where: { orgId: o.org.id, name: 'mine' } }))!;
    const first = newKeyOf(created.text);
    const rotated = await web.post(`${page}/${mine.id}/rotate`, { grace_seconds: '3600' });
    expect(rotated.status).to.equal(200);
    const second = newKeyOf(rotated.text);
    expect(second).to.match(/^svc_/).and.not.equal(first);
    expect(rotated.text).to.contain('data-test="grace"');
    expect((await models(first)).status).to.equal(200);
    expect((await models(second)).status).to.equal(200);
    const other = await web.post(`${page}/${o.keyId}/rotate`, { grace_seconds: '0' }, { json: true });
    expect(other.status, "not the member's key").to.equal(403);
  });
});
