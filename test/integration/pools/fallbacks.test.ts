import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { hitsByUpstream, poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { UsageEvent } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';
import { updateMemberLimits } from '../../../shared/tenancy/members';
import { buildWebMember } from '../../helpers/web-client';

const anthropicHeaders = (key: string) => ({ ...keyHeader(key), 'anthropic-version': '2023-06-01' });

async function usageOf(r: Reply | { headers: Headers }): Promise<UsageEvent[]> {
  await usageSettled();
  return UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
}

describe('model pools: fallbacks across provider kinds', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('chat: an OpenAI-kind pool that fails falls back to an Anthropic-kind model; the body keeps the id asked for', async () => {
    const broken = simDeployment('broken');
    const model = await poolModel([broken], { fallbacks: ['sim-claude'] });
    env().sim.knobs.set(broken.upstream, { status: 500 });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'fall back please' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal(model);
    expect(r.body.choices[0].message.content).to.include('fall back please');
    expect(r.headers.get('x-service-fallback-model')).to.equal('sim-claude');
    expect(r.headers.get('x-service-deployment')).to.equal('simulator-anthropic');
    expect(r.headers.get('x-service-attempts')).to.equal('2');
    expect(env().sim.log.entries.map((e) => e.path)).to.deep.equal(['/v1/chat/completions', '/v1/messages']);
    const rows = await usageOf(r);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({ model, deployment: 'sim-claude/simulator-anthropic' });
  });

  it('messages (streamed): an Anthropic-kind pool that fails falls back to an OpenAI-kind model', async () => {
    const claude = { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` };
    const model = await poolModel([claude], { fallbacks: ['sim-chat'] });
    env().sim.knobs.set(claude.upstream, { status: 529 });
    const res = await fetch(`${env().gw.url}/v1/messages`, {
      method: 'POST',
      headers: { ...anthropicHeaders(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'over to openai' }] }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-service-fallback-model')).to.equal('sim-chat');
    expect(res.headers.get('x-service-deployment')).to.equal('simulator');
    const text = await res.text();
    expect(text).to.include('event: message_start');
    expect(text).to.include(`"model":"${model}"`);
    expect(text).to.include('event: message_stop');
    expect(hitsByUpstream().get('sim-chat-1')).to.equal(1);
    expect((await usageOf(res))[0].deployment).to.equal('sim-chat/simulator');
  });

  it('responses: falls back, JSON and streamed, with the headers', async () => {
    const broken = simDeployment('broken');
    const model = await poolModel([broken], { fallbacks: ['sim-claude'] });
    env().sim.knobs.set(broken.upstream, { status: 503 });
    const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model, input: 'hello fallback' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal(model);
    expect(r.headers.get('x-service-fallback-model')).to.equal('sim-claude');
    const s = await postSse('/v1/responses', keyHeader(o.key), { model, input: 'stream fallback', stream: true });
    expect(s.status).to.equal(200);
    expect(s.events.at(-1)!.event).to.equal('response.completed');
    expect(s.events.at(-1)!.data.response.model).to.equal(model);
  });

  it('skips a fallback that cannot serve the request (tools, vision) and never degrades it', async () => {
    const plain = await poolModel([simDeployment('plain')], { capabilities: { chat: true, tools: false } });
    const broken = simDeployment('broken');
    const model = await poolModel([broken], { fallbacks: [plain, 'sim-chat'] });
    env().sim.knobs.set(broken.upstream, { status: 500 });
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    const withTools = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, tools, messages: [{ role: 'user', content: 'use a tool' }] } });
    expect(withTools.status, withTools.text).to.equal(200);
    expect(withTools.headers.get('x-service-fallback-model')).to.equal('sim-chat');
    const without = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'no tools' }] } });
    expect(without.headers.get('x-service-fallback-model')).to.equal(plain);
    const image = [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }];
    const vision = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: image }] } });
    expect(vision.headers.get('x-service-fallback-model'), 'plain has no vision').to.equal('sim-chat');
  });

  it('skips a fallback without the json_schema capability for a request with a strict tool, and takes it for the same tool not strict', async () => {
    const loose = simDeployment('loose');
    const noSchema = await poolModel([loose], { capabilities: { chat: true, tools: true, json_schema: false } });
    const broken = simDeployment('broken');
    const model = await poolModel([broken], { fallbacks: [noSchema, 'sim-chat'] });
    env().sim.knobs.set(broken.upstream, { status: 500 });
    const fn = { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false } };
    const ask = (f: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, tools: [{ type: 'function', function: f }], messages: [{ role: 'user', content: 'use a tool' }] } });
    const strict = await ask({ ...fn, strict: true });
    expect(strict.status, strict.text).to.equal(200);
    expect(strict.headers.get('x-service-fallback-model')).to.equal('sim-chat');
    expect(hitsByUpstream().has(loose.upstream), 'the fallback without json_schema is never tried').to.equal(false);
    const plain = await ask(fn);
    expect(plain.status, plain.text).to.equal(200);
    expect(plain.headers.get('x-service-fallback-model')).to.equal(noSchema);
  });

  it("a key with an allowed-models list is served only by the fallbacks on it: the others are skipped, and with none left the pool's failure is the answer", async () => {
    const broken = simDeployment('broken');
    const model = await poolModel([broken], { fallbacks: ['sim-claude', 'sim-chat'] });
    env().sim.knobs.set(broken.upstream, { status: 500 });
    const ask = (key: string) => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'only my models' }] } });
    const onlyChat = await createApiKey(env().redis, { orgId: o.org.id, controls: { allowedModels: [model, 'sim-chat'] } });
    const viaChat = await ask(onlyChat.key);
    expect(viaChat.status, viaChat.text).to.equal(200);
    expect(viaChat.headers.get('x-service-fallback-model'), 'sim-claude is not on the list').to.equal('sim-chat');
    expect(env().sim.log.entries.some((e) => e.path === '/v1/messages'), 'sim-claude never called').to.equal(false);
    // a member's list (docs/keys.md "Member limits") rules the fallbacks of their keys the same way
    const member = await buildWebMember(o.org.id, 'member');
    await updateMemberLimits(env().redis, o.org.id, member.id, { allowedModels: [model, 'sim-chat'] });
    const viaMember = await ask((await createApiKey(env().redis, { orgId: o.org.id, userId: member.id })).key);
    expect(viaMember.status, viaMember.text).to.equal(200);
    expect(viaMember.headers.get('x-service-fallback-model'), "sim-claude is not on the member's list").to.equal('sim-chat');
    expect(env().sim.log.entries.some((e) => e.path === '/v1/messages'), 'sim-claude still never called').to.equal(false);
    const onlyPool = await createApiKey(env().redis, { orgId: o.org.id, controls: { allowedModels: [model] } });
    const before = env().sim.log.entries.length;
    const refused = await ask(onlyPool.key);
    expect(refused.status, 'the pool failed and no fallback is allowed').to.be.at.least(500);
    expect(refused.headers.get('x-service-fallback-model')).to.equal(null);
    const tried = env().sim.log.entries.slice(before).map((e) => e.model);
    expect(tried.length).to.be.at.least(1);
    expect(tried.every((m) => m === broken.upstream), `only the broken deployment: ${tried.join(',')}`).to.equal(true);
    const full = await ask(o.key);
    expect(full.headers.get('x-service-fallback-model'), 'a key without a list: the first fallback').to.equal('sim-claude');
  });

  it('sends a request longer than the context window straight to a larger-context fallback', async () => {
    const small = simDeployment('small');
    const model = await poolModel([small], { context_window: 100, fallbacks: ['sim-chat'] });
    const long = 'word '.repeat(200);
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: long }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-service-fallback-model')).to.equal('sim-chat');
    expect(r.headers.get('x-service-attempts')).to.equal('1');
    expect(hitsByUpstream().has(small.upstream)).to.equal(false);
    const short = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'hi' }] } });
    expect(short.headers.get('x-service-fallback-model')).to.equal(null);
    expect(short.headers.get('x-service-deployment')).to.equal('small');
  });
});
