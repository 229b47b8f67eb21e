import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { leasesFreed } from '../../helpers/leases';
import { UsageEvent } from '../../../shared/db/models';
import { createApiKey, updateKeyControls } from '../../../shared/tenancy/ops';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { Model } from '../../../shared/db/models';

const chat = (key: string, model: string) => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'hi' }] } });

describe('key controls: allowed models and expiry', () => {
  beforeEach(resetSim);

  it('answers 403 model_not_allowed for a model outside the list, before any lane, upstream call or bill', async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { allowedModels: ['sim-chat'] });
    const ok = await chat(o.key, 'sim-chat');
    expect(ok.status, ok.text).to.equal(200);
    const bg = await chat(o.key, 'sim-chat-background');
    expect(bg.status, 'a -background variant follows its base').to.equal(200);
    // the allowed requests' slots, kept a moment by the pod for the next request (LEASE_KEEP_MS), are back
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive'), 'earlier leases freed').to.equal(true);
    env().sim.log.entries.length = 0;
    const r = await chat(o.key, 'sim-claude');
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('model_not_allowed');
    expect(r.body.error.message).to.contain('sim-claude');
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    expect(await env().gw.ctx.leases.count(o.org.id, 'chat', 'interactive'), 'no lane taken').to.equal(0);
    const emb = await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'sim-embed', input: 'x' } });
    expect(emb.status).to.equal(403);
    expect(emb.body.error.code).to.equal('model_not_allowed');
    await usageSettled();
    expect(await UsageEvent.count({ where: { apiKeyId: o.keyId } }), 'only the two allowed requests billed').to.equal(2);
  });

  it("a model of the catalog whose id is an allowed model's plus -background is a model of its own: not allowed by its base", async () => {
    const o = await buildOrg(env().redis);
    // an operator's distinct model that happens to end in -background (a costlier upstream behind it)
    const id = `attack-${o.org.slug}`;
    await upsertModel({ id, provider: 'simulator', upstream: 'sim-chat', capabilities: { chat: true }, prices: { input_token: 1, output_token: 1 } } as never);
    await upsertModel({ id: `${id}-background`, provider: 'simulator', upstream: 'sim-claude', capabilities: { chat: true }, prices: { input_token: 100, output_token: 100 } } as never);
    await bumpEpoch(env().redis);
    try {
      await updateKeyControls(env().redis, o.keyId, { allowedModels: [id] });
      expect((await chat(o.key, id)).status).to.equal(200);
      env().sim.log.entries.length = 0;
      const other = await chat(o.key, `${id}-background`);
      expect([other.status, other.body.error?.code], 'the model of its own is not on the list').to.deep.equal([403, 'model_not_allowed']);
      expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
      const listed = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
      expect(listed.body.data.map((m: { id: string }) => m.id), 'nor listed').to.deep.equal([id]);
      expect((await call('GET', `/v1/models/${id}-background`, { headers: keyHeader(o.key) })).status).to.equal(404);
      await updateKeyControls(env().redis, o.keyId, { allowedModels: [`${id}-background`] });
      expect((await chat(o.key, `${id}-background`)).status, 'named on the list: allowed').to.equal(200);
      expect((await chat(o.key, id)).status, 'which allows neither its namesake base').to.equal(403);
    } finally {
      await Model.destroy({ where: { publicId: [id, `${id}-background`] } });
      await bumpEpoch(env().redis);
    }
  });

  it('an expired key answers 401 INVALID_API_KEY saying it expired and when, on its next request', async () => {
    const o = await buildOrg(env().redis);
    expect((await chat(o.key, 'sim-chat')).status).to.equal(200);
    const at = new Date(Date.now() - 1000);
    await updateKeyControls(env().redis, o.keyId, { expiresAt: at });
    const r = await chat(o.key, 'sim-chat');
    expect(r.status).to.equal(401);
    expect(r.body.error.code).to.equal('INVALID_API_KEY');
    expect(r.body.error.message).to.contain('expired').and.to.contain(at.toISOString());
    await updateKeyControls(env().redis, o.keyId, { expiresAt: new Date(Date.now() + 3_600_000) });
    expect((await chat(o.key, 'sim-chat')).status, 'a future expiry works').to.equal(200);
  });
});
