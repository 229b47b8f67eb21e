import { expect } from 'chai';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { env, startGateway } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { mcpToolAllowed } from '../../../shared/policies/mcp-tools';
import { AuditLog, Organization, User } from '../../../shared/db/models';
import { readSwitches, setSwitch } from '../../../shared/switches/switches';
import { waitFor } from '../../helpers/wait';

describe('management API: capability policies, kill switches, live catalog', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  before(async () => {
    admin = await startAdmin();
    key = (await buildPlatformKey(['capability-policies:write', 'inference-models:write'])).key;
  });
  after(() => admin.close());
  const req = (method: string, path: string, json?: unknown) => adminCall(admin.url, key, method, `/admin/v1${path}`, json);

  it('writes per-org capability policies where the inference side reads them, seen on its next request', async () => {
    const o = await buildOrg(env().redis, { plan: 'free' });
    const dir = env().gw.ctx.directory;
    await dir.sync();
    expect(capabilityPolicy((await dir.org(o.org.id))!, 'systemone')).to.equal('metered');
    const r = await req('PATCH', `/capability-policies/${o.org.id}`, { systemone: 'off', audio: 'off', image_generation: 'off', background: true });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ org_id: o.org.id, systemone: 'off', audio: 'off', background: true });
    expect(r.body.effective).to.deep.equal({ systemone: 'off', audio: 'off', audio_billing: 'included', image_generation: 'off', background: true });
    expect((await Organization.findByPk(o.org.id))!.policies).to.include({ systemone: 'off', audio: 'off', image_generation: 'off' });
    await dir.sync();
    const ctx = (await dir.org(o.org.id))!;
    expect(capabilityPolicy(ctx, 'systemone')).to.equal('off');
    expect(capabilityPolicy(ctx, 'audio')).to.equal('off');
    expect(ctx.entitlements.background).to.equal(true);
    // null clears the org's own value: the plan's or the platform default applies again.
    const cleared = await req('PATCH', `/capability-policies/${o.org.id}`, { systemone: null });
    expect(cleared.body.systemone).to.equal(null);
    expect(cleared.body.effective.systemone).to.equal('metered');
    await dir.sync();
    expect(capabilityPolicy((await dir.org(o.org.id))!, 'systemone')).to.equal('metered');
    for (const bad of [{ systemone: 'sometimes' }, { audio: true }, {}, { mcp_tools: { web_search: 'maybe' } }]) {
      const rejected = await req('PATCH', `/capability-policies/${o.org.id}`, bad);
      expect(rejected.status).to.equal(400);
      expect(rejected.body.error.code).to.equal('invalid_request');
    }
    expect((await req('GET', '/capability-policies/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    const audited = await waitFor(async () => ((await AuditLog.count({ where: { targetId: o.org.id, method: 'PATCH' } })) >= 6 ? true : null));
    expect(audited, 'two successful and four refused PATCHes audited').to.equal(true);
    expect(await AuditLog.count({ where: { targetId: o.org.id, method: 'PATCH', outcome: 'failure', status: 400 } })).to.equal(4);
    const listed = await req('GET', '/capability-policies?limit=200');
    expect(listed.body.data.length).to.be.greaterThan(0);
  });

  it('MCP tool allow/deny per org and per user, the user winning, through a cached lookup', async () => {
    const o = await buildOrg(env().redis);
    const u = await User.create({ email: `tools-${Date.now()}@example.com`, name: null });
    const dir = env().gw.ctx.directory;
    const allowed = async (userId: string | null) => {
      await dir.sync();
      return mcpToolAllowed(dir, (await dir.org(o.org.id))!, userId, 'web_search');
    };
    expect(await allowed(u.id)).to.equal(true);
    expect((await req('PATCH', `/capability-policies/${o.org.id}`, { mcp_tools: { web_search: 'deny' } })).status).to.equal(200);
    expect(await allowed(null)).to.equal(false);
    expect(await allowed(u.id)).to.equal(false);
    const ur = await req('PATCH', `/capability-policies/users/${u.id}`, { mcp_tools: { web_search: 'allow' } });
    expect(ur.status, ur.text).to.equal(200);
    expect(ur.body).to.deep.equal({ object: 'user_capability_policy', user_id: u.id, mcp_tools: { web_search: 'allow' } });
    expect(await allowed(u.id)).to.equal(true);
    expect(await allowed(null)).to.equal(false);
    await req('PATCH', `/capability-policies/users/${u.id}`, { mcp_tools: null });
    expect(await allowed(u.id)).to.equal(false);
    expect((await req('PATCH', `/capability-policies/users/${u.id}`, { mcp_tools: { web_search: 'yes' } })).status).to.equal(400);
  });

  it('a kill switch flipped through the API changes a second app instance', async () => {
    const second = await startGateway('admin-switch-pod');
    try {
      expect(second.ctx.switches.engaged('transcription')).to.equal(false);
      const r = await req('PUT', '/capability-policies/switches/transcription', { engaged: true });
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.deep.equal({ object: 'kill_switch', feature: 'transcription', code: 'audio_transcription_disabled', state: 'engaged' });
      // how fast a pod follows is the switch board's own test (foundation/switch-follow)
      expect(await waitFor(() => second.ctx.switches.engaged('transcription'), 5000, 10)).to.equal(true);
      // ...and the second instance's transcription routes answer the disabled code, still registered.
      const o = await buildOrg(env().redis);
      const off = await call('GET', '/v1/audio/transcriptions/models', { base: second.url, headers: keyHeader(o.key) });
      expect(off.status).to.equal(503);
      expect(off.body.error.code).to.equal('audio_transcription_disabled');
      const listed = await req('GET', '/capability-policies/switches');
      expect(listed.body.data.find((s: { feature: string }) => s.feature === 'transcription').state).to.equal('engaged');
      await req('PUT', '/capability-policies/switches/transcription', { engaged: false });
      expect(await waitFor(() => !second.ctx.switches.engaged('transcription'), 5000, 10)).to.equal(true);
      expect((await call('GET', '/v1/audio/transcriptions/models', { base: second.url, headers: keyHeader(o.key) })).status).to.equal(200);
      const unknown = await req('PUT', '/capability-policies/switches/teleport', { engaged: true });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('not_found');
      const entry = await waitFor(() => AuditLog.findOne({ where: { targetId: 'transcription', method: 'PUT', requestId: r.headers.get('x-service-request-id') } }));
      expect(entry).to.include({ family: 'capability-policies', outcome: 'success', path: '/admin/v1/capability-policies/switches/transcription' });
      expect(entry!.fields).to.deep.equal(['engaged']);
      const bad = await req('PUT', '/capability-policies/switches/systemone', { engaged: 'yes' });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.code).to.equal('invalid_request');
      // the second pod has read the switches since the refused write: it cannot be still catching up
      await second.ctx.switches.refresh();
      expect(second.ctx.switches.engaged('systemone'), 'a refused write engages nothing').to.equal(false);
      expect((await readSwitches(env().redis)).systemone).to.equal(false);
    } finally {
      await setSwitch(env().redis, 'transcription', false);
      await second.close();
    }
  });

  it('a model created, changed or disabled through the API reaches inference pods without a restart', async () => {
    const o = await buildOrg(env().redis);
    const second = await startGateway('admin-catalog-pod');
    try {
      const sim = (await req('GET', '/inference-models?public_id=sim-chat')).body.data[0];
      const id = `live-${Date.now()}`;
      const created = await req('POST', '/inference-models', { public_id: id, provider_id: sim.provider_id, upstream_name: 'sim-chat', capabilities: { chat: true }, display_name: 'Live' });
      expect(created.status, created.text).to.equal(201);
      for (const base of [env().gw.url, second.url]) {
        const m = await call('GET', `/v1/models/${id}`, { base, headers: keyHeader(o.key) });
        expect(m.status).to.equal(200);
        expect(m.body.display_name).to.equal('Live');
      }
      const chat = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: id, messages: [{ role: 'user', content: 'hello' }] } });
      expect(chat.status, chat.text).to.equal(200);
      expect(chat.body.model).to.equal(id);
      await req('PATCH', `/inference-models/${created.body.id}`, { enabled: false });
      for (const base of [env().gw.url, second.url]) {
        expect((await call('GET', `/v1/models/${id}`, { base, headers: keyHeader(o.key) })).status).to.equal(404);
      }
    } finally {
      await second.close();
    }
  });
});
