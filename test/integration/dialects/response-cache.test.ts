import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { CohereClientV2 } from 'cohere-ai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { openaiOrg } from '../../helpers/openai-org';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { roomInMinute, waitFor } from '../../helpers/wait';
import { createApiKey, createProject, updateKeyControls } from '../../../shared/tenancy/ops';
import { RoutingPlan } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { poolModel, simDeployment } from '../../helpers/pool-models';

const chat = (n: number) => ({ model: 'sim-chat', messages: [{ role: 'user', content: `cache me ${n}` }] });
const sent = () => env().sim.log.entries.length;

/** The exact-match answer cache (`SERVICE-CACHE`, api/dispatch/response-cache.ts) on chat completions and embeddings. */
describe('answer cache (SERVICE-CACHE)', () => {
  const s = openaiOrg();
  const post = (path: string, json: unknown, headers: Record<string, string> = {}, key = s.o.key) => call('POST', path, { headers: { ...keyHeader(key), ...headers }, json });
  const usage = async () => {
    await usageSettled();
    return UsageEvent.count({ where: { orgId: s.o.org.id } });
  };

  it('answers the same request of the same org from the cache: no upstream call, no charge, the same body; refresh recomputes; other bodies, orgs and uncached requests miss', async () => {
    const on = { 'SERVICE-CACHE': 'on' };
    const first = await post('/v1/chat/completions', chat(1), on);
    expect([first.status, first.headers.get('x-service-cache')]).to.deep.equal([200, 'MISS']);
    const billed = await usage();
    const before = sent();
    const again = await post('/v1/chat/completions', chat(1), on);
    expect([again.status, again.headers.get('x-service-cache')]).to.deep.equal([200, 'HIT']);
    expect(again.body).to.deep.equal(first.body);
    expect(sent(), 'no upstream call').to.equal(before);
    expect(await usage(), 'no charge').to.equal(billed);
    const hitRows = async () =>
      db().query<{ n: number }>("SELECT count(*)::int AS n FROM request_logs WHERE org_id = :org AND route = '/v1/chat/completions' AND status = 200 AND model = 'sim-chat' AND input_tokens = 0", { type: QueryTypes.SELECT, replacements: { org: s.o.org.id } });
    expect(await waitFor(async () => (await hitRows())[0].n === 1, 10_000), 'the hit’s Activity row: the model, no tokens').to.equal(true);

    expect((await post('/v1/chat/completions', chat(2), on)).headers.get('x-service-cache'), 'another body').to.equal('MISS');
    expect((await post('/v1/chat/completions', chat(1))).headers.get('x-service-cache'), 'not asked: not cached').to.equal(null);
    const refreshed = await post('/v1/chat/completions', chat(1), { 'SERVICE-CACHE': 'refresh' });
    expect(refreshed.headers.get('x-service-cache')).to.equal('REFRESH');
    expect(refreshed.body.id, 'a new answer').to.not.equal(first.body.id);
    expect((await post('/v1/chat/completions', chat(1), on)).body.id, 'the refreshed answer is kept').to.equal(refreshed.body.id);
    const other = await buildOrg(env().redis);
    expect((await post('/v1/chat/completions', chat(1), on, other.key)).headers.get('x-service-cache'), 'another org').to.equal('MISS');
    const stream = await post('/v1/chat/completions', { ...chat(1), stream: true }, on);
    expect([stream.status, stream.headers.get('x-service-cache')], 'a stream is kept apart from the JSON answer').to.deep.equal([200, 'MISS']);

    const m = { model: 'sim-claude', max_tokens: 64, messages: [{ role: 'user', content: 'cache a message' }] };
    const h = { ...on, 'anthropic-version': '2023-06-01' };
    const m1 = await post('/v1/messages', m, h);
    const m2 = await post('/v1/messages', m, h);
    expect([m1.status, m1.headers.get('x-service-cache'), m2.headers.get('x-service-cache')]).to.deep.equal([200, 'MISS', 'HIT']);
    expect(m2.body).to.deep.equal(m1.body);

    const e1 = await post('/v1/embeddings', { model: 'sim-embed', input: ['cached vectors'] }, on);
    const e2 = await post('/v1/embeddings', { model: 'sim-embed', input: ['cached vectors'] }, on);
    expect([e1.headers.get('x-service-cache'), e2.headers.get('x-service-cache')]).to.deep.equal(['MISS', 'HIT']);
    expect(e2.body.data).to.deep.equal(e1.body.data);
  });

  it("an answer is its project's: another project's key of the org misses, a key of the same project hits, the org key naming the project hits", async () => {
    const o = await buildOrg(env().redis);
    const other = await createProject(env().redis, o.org.id, `other-${o.org.id.slice(0, 6)}`);
    const [inA, alsoInA, inB] = await Promise.all([
      createApiKey(env().redis, { orgId: o.org.id, projectId: o.project.id }),
      createApiKey(env().redis, { orgId: o.org.id, projectId: o.project.id }),
      createApiKey(env().redis, { orgId: o.org.id, projectId: other.id }),
    ]);
    const on = { 'SERVICE-CACHE': 'on' };
    const body = chat(4242);
    expect((await post('/v1/chat/completions', body, on, inA.key)).headers.get('x-service-cache')).to.equal('MISS');
    expect((await post('/v1/chat/completions', body, on, alsoInA.key)).headers.get('x-service-cache'), 'the same project').to.equal('HIT');
    expect((await post('/v1/chat/completions', body, on, inB.key)).headers.get('x-service-cache'), 'another project').to.equal('MISS');
    expect((await post('/v1/chat/completions', body, { ...on, 'SERVICE-PROJECT-ID': o.project.id }, o.key)).headers.get('x-service-cache'), 'the org key naming project A').to.equal('HIT');
    expect((await post('/v1/chat/completions', body, on, o.key)).headers.get('x-service-cache'), 'the org key without a project').to.equal('MISS');
  });

  it('replays a kept stream through the official SDKs (chat completions, messages, Cohere chat): the same events, no upstream call, no charge; a stream that failed is not kept', async () => {
    const on = { 'SERVICE-CACHE': 'on' };
    const body = { model: 'sim-chat', messages: [{ role: 'user' as const, content: 'stream me from the cache' }], stream: true as const, stream_options: { include_usage: true } };
    const read = async () => {
      const { data, response } = await s.c.chat.completions.create(body, { headers: on }).withResponse();
      const chunks: unknown[] = [];
      for await (const chunk of data) chunks.push(chunk);
      return { header: response.headers.get('x-service-cache'), chunks };
    };
    const first = await read();
    expect(first.header).to.equal('MISS');
    const billed = await usage();
    const before = sent();
    const again = await read();
    expect(again.header).to.equal('HIT');
    expect(again.chunks, 'the same chunks, usage included').to.deep.equal(first.chunks);
    expect(first.chunks.length).to.be.above(2);
    expect(sent(), 'no upstream call').to.equal(before);
    expect(await usage(), 'no charge').to.equal(billed);

    const anthropic = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const readMessages = async () => {
      const { data, response } = await anthropic.messages.create({ model: 'sim-claude', max_tokens: 64, messages: [{ role: 'user', content: 'stream a message from the cache' }], stream: true }, { headers: on }).withResponse();
      const events: unknown[] = [];
      for await (const ev of data) events.push(ev);
      return { header: response.headers.get('x-service-cache'), events };
    };
    const m1 = await readMessages();
    const m2 = await readMessages();
    expect([m1.header, m2.header]).to.deep.equal(['MISS', 'HIT']);
    expect(m2.events, 'the same events, named as sent').to.deep.equal(m1.events);
    expect((m2.events as Array<{ type: string }>).map((e) => e.type)).to.include.members(['message_start', 'content_block_delta', 'message_stop']);

    // Cohere's v2 chat, JSON and streamed, through CohereClientV2 (the header as a request option)
    const co = new CohereClientV2({ token: s.o.key, environment: env().gw.url });
    const coBody = { model: 'sim-chat', messages: [{ role: 'user' as const, content: 'cache a cohere chat' }] };
    const c1 = await co.chat(coBody, { headers: on });
    const beforeCohere = sent();
    const c2 = await co.chat(coBody, { headers: on });
    expect(c2, 'the kept answer').to.deep.equal(c1);
    const coStream = async () => {
      const events: unknown[] = [];
      for await (const ev of await co.chatStream(coBody, { headers: on })) events.push(ev);
      return events;
    };
    const cs1 = await coStream();
    const afterFirstStream = sent();
    const cs2 = await coStream();
    expect(cs2, 'the kept stream').to.deep.equal(cs1);
    expect([afterFirstStream - beforeCohere, sent() - afterFirstStream], 'a hit calls nothing upstream; the first stream did').to.deep.equal([1, 0]);

    env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 2 });
    const cut = { ...body, messages: [{ role: 'user' as const, content: 'a stream that breaks' }] };
    const broken = await s.c.chat.completions.create(cut, { headers: on }).then(async (st) => {
      for await (const _ of st) void _;
    }).then(() => 'ended', () => 'failed');
    expect(broken, 'the stream failed').to.equal('failed');
    env().sim.knobs.reset();
    const { response } = await s.c.chat.completions.create(cut, { headers: on }).withResponse();
    expect(response.headers.get('x-service-cache'), 'a failed stream was not kept').to.equal('MISS');
  });

  it('keeps an answer SERVICE-CACHE-TTL seconds; never a failure; bad headers are 400 naming them, nothing sent', async () => {
    const on = { 'SERVICE-CACHE': 'on', 'SERVICE-CACHE-TTL': '1' };
    expect((await post('/v1/chat/completions', chat(3), on)).headers.get('x-service-cache')).to.equal('MISS');
    expect((await post('/v1/chat/completions', chat(3), on)).headers.get('x-service-cache')).to.equal('HIT');
    await new Promise((r) => setTimeout(r, 1200));
    expect((await post('/v1/chat/completions', chat(3), on)).headers.get('x-service-cache'), 'expired').to.equal('MISS');

    env().sim.knobs.set('sim-chat-1', { status: 500 });
    const failed = await post('/v1/chat/completions', chat(4), { 'SERVICE-CACHE': 'on' });
    expect(failed.status).to.be.within(500, 599);
    env().sim.knobs.reset();
    expect((await post('/v1/chat/completions', chat(4), { 'SERVICE-CACHE': 'on' })).headers.get('x-service-cache'), 'the failure was not kept').to.equal('MISS');

    const before = sent();
    for (const [headers, param] of [
      [{ 'SERVICE-CACHE': 'sometimes' }, 'SERVICE-CACHE'],
      [{ 'SERVICE-CACHE': 'on', 'SERVICE-CACHE-TTL': '0' }, 'SERVICE-CACHE-TTL'],
      [{ 'SERVICE-CACHE': 'on', 'SERVICE-CACHE-TTL': 'soon' }, 'SERVICE-CACHE-TTL'],
    ] as Array<[Record<string, string>, string]>) {
      const r = await post('/v1/chat/completions', chat(5), headers);
      expect([r.status, r.body.error.param], JSON.stringify(headers)).to.deep.equal([400, param]);
    }
    const streamed = await post('/v1/chat/completions', { ...chat(5), stream: true }, { 'SERVICE-CACHE': 'sometimes' });
    expect([streamed.status, streamed.body.error.param], 'a stream: refused before it starts').to.deep.equal([400, 'SERVICE-CACHE']);
    expect(sent(), 'nothing sent').to.equal(before);
  });

  it("a hit is one request for its key's rpm (a JSON hit and a streamed one): the minute's last is refused 429 with Retry-After, nothing sent", async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { rpm: 3 });
    expect(await roomInMinute()).to.equal(true);
    const on = { 'SERVICE-CACHE': 'on' };
    const body = { model: 'sim-chat', messages: [{ role: 'user', content: `rpm and the cache ${Date.now()}` }] };
    const first = await post('/v1/chat/completions', body, on, o.key);
    expect([first.status, first.headers.get('x-service-cache')]).to.deep.equal([200, 'MISS']);
    const hit = await post('/v1/chat/completions', body, on, o.key);
    expect([hit.status, hit.headers.get('x-service-cache')]).to.deep.equal([200, 'HIT']);
    const streamed = await post('/v1/chat/completions', { ...body, stream: true }, on, o.key);
    expect([streamed.status, streamed.headers.get('x-service-cache')], 'the third request of the minute').to.deep.equal([200, 'MISS']);
    const before = sent();
    const refused = await post('/v1/chat/completions', body, on, o.key);
    expect([refused.status, refused.body.error.code], 'a hit past the key\'s rpm').to.deep.equal([429, 'rate_limit_exceeded']);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    expect(refused.headers.get('x-service-cache'), 'not answered from the cache').to.equal(null);
    const refusedStream = await post('/v1/chat/completions', { ...body, stream: true }, on, o.key);
    expect([refusedStream.status, refusedStream.body.error.code], 'a streamed hit, refused before its stream starts').to.deep.equal([429, 'rate_limit_exceeded']);
    expect(sent(), 'nothing sent').to.equal(before);
  });
  it("an alias is cached as the model it names: two routing plans mapping one alias to different models never share an answer, and a key's allowed models hold on a hit", async () => {
    const o = await buildOrg(env().redis);
    const toChat = await RoutingPlan.create({ orgId: o.org.id, name: 'cache-a', modelMap: { fast: 'sim-chat' }, projectId: null } as never);
    const toClaude = await RoutingPlan.create({ orgId: o.org.id, name: 'cache-b', modelMap: { fast: 'sim-claude' }, projectId: null } as never);
    await bumpEpoch(env().redis);
    // a member's key that may call sim-claude only
    const limited = await createApiKey(env().redis, { orgId: o.org.id, controls: { allowedModels: ['sim-claude'] } });
    const on = { 'SERVICE-CACHE': 'on' };
    const body = { model: 'fast', messages: [{ role: 'user', content: `one alias, two plans ${Date.now()}` }] };
    const viaChat = await post(`/r/${toChat.id}/v1/chat/completions`, body, on, o.key);
    expect([viaChat.status, viaChat.headers.get('x-service-cache')]).to.deep.equal([200, 'MISS']);
    // the limited key may not call sim-chat: through the plan that names it, refused
    expect((await post(`/r/${toChat.id}/v1/chat/completions`, body, on, limited.key)).status).to.equal(403);
    const before = sent();
    const viaClaude = await post(`/r/${toClaude.id}/v1/chat/completions`, body, on, limited.key);
    expect([viaClaude.status, viaClaude.headers.get('x-service-cache')], "another plan's alias: not the sim-chat answer").to.deep.equal([200, 'MISS']);
    expect(viaClaude.body.id).to.not.equal(viaChat.body.id);
    expect(sent(), 'sent to sim-claude').to.equal(before + 1);
    const again = await post(`/r/${toClaude.id}/v1/chat/completions`, body, on, o.key);
    expect([again.headers.get('x-service-cache'), again.body.id], 'the same plan: its own answer').to.deep.equal(['HIT', viaClaude.body.id]);
  });
  it("an answer a fallback model served is not kept: a key whose allowed models leave that fallback out never gets it from the cache (JSON and streamed)", async () => {
    const o = await buildOrg(env().redis);
    const broken = simDeployment('broken');
    const model = await poolModel([broken], { fallbacks: ['sim-claude'] });
    env().sim.knobs.set(broken.upstream, { status: 500 });
    // a member's key that may call the pool's model but not its fallback
    const limited = await createApiKey(env().redis, { orgId: o.org.id, controls: { allowedModels: [model] } });
    const on = { 'SERVICE-CACHE': 'on' };
    for (const stream of [false, true]) {
      const body = { model, stream, messages: [{ role: 'user', content: `served by the fallback ${stream} ${Date.now()}` }] };
      const viaFallback = await post('/v1/chat/completions', body, on, o.key);
      expect([viaFallback.status, viaFallback.headers.get('x-service-fallback-model')]).to.deep.equal([200, 'sim-claude']);
      const again = await post('/v1/chat/completions', body, on, o.key);
      expect(again.headers.get('x-service-cache'), 'not kept').to.equal('MISS');
      const limitedAsk = await post('/v1/chat/completions', body, on, limited.key);
      expect(limitedAsk.headers.get('x-service-cache'), 'no kept answer of sim-claude for the limited key').to.not.equal('HIT');
      expect(limitedAsk.status, 'the pool failed and its fallback is not on the list').to.be.at.least(500);
    }
    env().sim.knobs.reset();
  });
});
