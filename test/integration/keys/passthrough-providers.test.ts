import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { adminSuite } from '../../helpers/admin';
import { usageSettled } from '../../helpers/usage';
import { poolModel, rndId } from '../../helpers/pool-models';
import { upsertProvider, type ProviderInput } from '../../../shared/catalog/catalog-ops';
import { UsageEvent } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';

const OWN = 'sk-made-up-own-key';
const chat = (key: string, model: string, own?: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/v1/chat/completions', {
    headers: own ? { ...keyHeader(key), authorization: `Bearer ${own}` } : keyHeader(key),
    json: { model, max_tokens: 10, messages: [{ role: 'user', content: 'who pays?' }], ...extra },
  });

/** An OpenAI-compatible provider on the simulator, under the platform's key. */
async function simProvider(extra: Partial<ProviderInput> = {}): Promise<string> {
  const name = `pt-${rndId()}`;
  await upsertProvider({ name, kind: 'openai', base_url: `${env().simUrl}/v1`, api_key: 'platform-key', ...extra } as ProviderInput);
  await bumpEpoch(env().redis);
  return name;
}

/** A model of one deployment on the provider; its upstream name tells its requests apart in the simulator's log. */
const modelOn = (provider: string) => poolModel([{ name: 'only', provider, upstream: `up-${rndId()}` }]);

/** What reached the simulator: the Authorization each request carried, by upstream model. */
const seen = () => env().sim.log.entries.map((e) => [e.model, e.authorization]);

/**
 * Passthrough (the caller's own provider key, docs/api.md) is the provider's to allow: a self-hosted
 * upstream (the vllm and ollama presets) checks no key, so a made-up one would be served there free.
 */
describe("passthrough: a provider says whether callers may bring their own key", () => {
  beforeEach(resetSim);

  for (const preset of ['vllm', 'ollama'] as const) {
    it(`${preset} preset: an own key is refused (403 passthrough_not_allowed), nothing sent or metered; the gateway key alone is served on the platform's key`, async function () {
      this.timeout(30_000);
      const model = await modelOn(await simProvider({ preset }));
      const o = await buildOrg(env().redis);
      const refused = await chat(o.key, model, OWN);
      expect(refused.status, refused.text).to.equal(403);
      expect(refused.body.error.code).to.equal('passthrough_not_allowed');
      expect(refused.body.error.message).to.include('passthrough').and.include(model);
      const streamed = await chat(o.key, model, OWN, { stream: true });
      expect([streamed.status, streamed.body?.error?.code], 'a stream too, before it starts').to.deep.equal([403, 'passthrough_not_allowed']);
      const completions = await call('POST', '/v1/completions', { headers: { ...keyHeader(o.key), 'x-api-key': OWN }, json: { model, prompt: 'x', max_tokens: 5 } });
      expect([completions.status, completions.body?.error?.code], 'legacy completions, the key in x-api-key').to.deep.equal([403, 'passthrough_not_allowed']);
      expect(seen(), 'nothing reached the upstream').to.deep.equal([]);
      await usageSettled();
      const ids = [refused, streamed, completions].map((r) => r.headers.get('x-service-request-id')!);
      expect(await UsageEvent.count({ where: { requestId: ids } }), 'nothing metered').to.equal(0);

      const paid = await chat(o.key, model);
      expect(paid.status, paid.text).to.equal(200);
      expect(seen().map(([, auth]) => auth)).to.deep.equal(['Bearer platform-key']);
    });
  }

  it('a self-hosted preset set to allow it forwards the own key; an openai provider set to refuse it refuses', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    const allowed = await modelOn(await simProvider({ preset: 'vllm', passthrough: true }));
    const own = await chat(o.key, allowed, OWN);
    expect(own.status, own.text).to.equal(200);
    expect(seen(), 'the own key went upstream').to.deep.equal([[seen()[0][0], `Bearer ${OWN}`]]);
    await usageSettled();
    const event = await UsageEvent.findOne({ where: { requestId: own.headers.get('x-service-request-id')! } });
    expect(event?.passthrough, 'metered as passthrough').to.equal(true);

    resetSim();
    const closed = await modelOn(await simProvider({ passthrough: false }));
    const refused = await chat(o.key, closed, OWN);
    expect([refused.status, refused.body.error?.code]).to.deep.equal([403, 'passthrough_not_allowed']);
    expect(seen()).to.deep.equal([]);
  });

  it("a server that is not a vendor's own host refuses an own key by default, whatever its kind or preset; set to allow it, it forwards the key", async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    // an OpenAI-compatible server the operator runs may check no key: a made-up one would be served free
    for (const preset of [undefined, 'groq', 'openrouter'] as const) {
      resetSim();
      const model = await modelOn(await simProvider(preset ? { preset } : {}));
      const r = await chat(o.key, model, OWN);
      expect([r.status, r.body.error?.code], `${preset}: ${r.text}`).to.deep.equal([403, 'passthrough_not_allowed']);
      expect(seen(), String(preset)).to.deep.equal([]);
      const open = await modelOn(await simProvider(preset ? { preset, passthrough: true } : { passthrough: true }));
      const own = await chat(o.key, open, OWN);
      expect(own.status, `${preset}: ${own.text}`).to.equal(200);
      expect(seen().map(([, auth]) => auth), String(preset)).to.deep.equal([`Bearer ${OWN}`]);
    }
  });

  it("a pool mixing providers: the primary's setting decides, and the caller's key never reaches a provider that refuses it", async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    const [open, closed] = [await simProvider({ passthrough: true }), await simProvider({ preset: 'vllm' })];
    const [openUp, closedUp] = [`open-${rndId()}`, `closed-${rndId()}`];
    const closedFirst = await poolModel([{ name: 'closed', provider: closed, upstream: closedUp }, { name: 'open', provider: open, upstream: openUp }]);
    const refused = await chat(o.key, closedFirst, OWN);
    expect([refused.status, refused.body.error?.code], 'a primary that refuses it').to.deep.equal([403, 'passthrough_not_allowed']);
    expect(seen()).to.deep.equal([]);

    // the primary allows it; the other deployment (it refuses) is the only one up: it is still not sent the key
    const openFirst = await poolModel([{ name: 'open', provider: open, upstream: openUp }, { name: 'closed', provider: closed, upstream: closedUp }]);
    env().sim.knobs.set(openUp, { status: 503 });
    const failed = await chat(o.key, openFirst, OWN);
    expect(failed.status, failed.text).to.equal(503);
    expect(seen().filter(([m]) => m === closedUp), 'the refusing deployment saw nothing').to.deep.equal([]);
    expect(seen().every(([m, auth]) => m === openUp && auth === `Bearer ${OWN}`), JSON.stringify(seen())).to.equal(true);
    // without an own key the pool serves as usual, the refusing deployment on the platform's key
    resetSim();
    env().sim.knobs.set(openUp, { status: 503 });
    const paid = await chat(o.key, openFirst);
    expect(paid.status, paid.text).to.equal(200);
    expect(seen().filter(([m]) => m === closedUp).map(([, auth]) => auth)).to.deep.equal(['Bearer platform-key']);
  });

  it('a primary provider that cannot serve chat (cohere) does not pass the caller\'s key on to the pool\'s other provider', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    const cohere = await simProvider({ kind: 'cohere', base_url: env().simUrl, passthrough: true });
    const otherUp = `other-${rndId()}`;
    for (const other of [await simProvider({ preset: 'vllm' }), await simProvider({ passthrough: true })]) {
      resetSim();
      const model = await poolModel([{ name: 'embed', provider: cohere, upstream: `c-${rndId()}` }, { name: 'chat', provider: other, upstream: otherUp }]);
      const refused = await chat(o.key, model, OWN);
      expect([refused.status, refused.body.error?.code], refused.text).to.deep.equal([403, 'passthrough_not_allowed']);
      expect(refused.body.error.message).to.include('primary provider');
      expect(seen(), 'the key went nowhere').to.deep.equal([]);
      const paid = await chat(o.key, model);
      expect(paid.status, paid.text).to.equal(200);
      expect(seen()).to.deep.equal([[otherUp, 'Bearer platform-key']]);
    }
  });
});

describe('passthrough: the management API sets it on a provider', () => {
  const admin = adminSuite();
  beforeEach(resetSim);

  it('shows the value in force (vllm: refused), takes true, false and null (the default again); inference follows', async function () {
    this.timeout(30_000);
    const created = await admin.call('POST', '/admin/v1/providers', { name: `pt-api-${rndId()}`, kind: 'openai', base_url: `${env().simUrl}/v1`, settings: { preset: 'vllm' } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.passthrough, 'the default of the vllm preset').to.equal(false);
    const model = await modelOn(created.body.name);
    const o = await buildOrg(env().redis);
    expect((await chat(o.key, model, OWN)).status).to.equal(403);

    const opened = await admin.call('PATCH', `/admin/v1/providers/${created.body.id}`, { passthrough: true });
    expect([opened.status, opened.body.passthrough, opened.body.settings], opened.text).to.deep.equal([200, true, { preset: 'vllm' }]);
    const own = await chat(o.key, model, OWN);
    expect(own.status, own.text).to.equal(200);
    expect(seen().map(([, auth]) => auth)).to.deep.equal([`Bearer ${OWN}`]);

    const reset = await admin.call('PATCH', `/admin/v1/providers/${created.body.id}`, { passthrough: null });
    expect([reset.status, reset.body.passthrough]).to.deep.equal([200, false]);
    expect((await chat(o.key, model, OWN)).status).to.equal(403);
    const vendors: Array<[string, string, Record<string, string>?]> = [
      ['anthropic', 'https://api.anthropic.com'], ['openai', 'https://api.openai.com/v1'], ['openai', 'https://api.groq.com/openai/v1', { preset: 'groq' }],
      ['azure', 'https://res-1.openai.azure.com', { api_version: '2024-10-21' }], ['bedrock', 'https://bedrock-runtime.us-east-1.amazonaws.com', { region: 'us-east-1' }],
      ['gemini', 'https://generativelanguage.googleapis.com'],
    ];
    for (const [kind, base_url, settings] of vendors) {
      const plain = await admin.call('POST', '/admin/v1/providers', { name: `pt-api-${rndId()}`, kind, base_url, ...(settings ? { settings } : {}) });
      expect([plain.status, plain.body.passthrough], `${base_url}: a vendor that checks and bills the key: allowed`).to.deep.equal([201, true]);
    }
    for (const base_url of ['http://api.openai.com/v1', 'https://api.openai.com.evil.example/v1', 'https://10.0.0.7:8000/v1', 'https://llm.internal.example/v1']) {
      const other = await admin.call('POST', '/admin/v1/providers', { name: `pt-api-${rndId()}`, kind: 'openai', base_url });
      expect([other.status, other.body.passthrough], `${base_url}: not a vendor's own https host`).to.deep.equal([201, false]);
    }
    const invalid = await admin.call('PATCH', `/admin/v1/providers/${created.body.id}`, { passthrough: 'sometimes' });
    expect([invalid.status, invalid.body.error?.code]).to.deep.equal([400, 'invalid_request']);
  });
});
