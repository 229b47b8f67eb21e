import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { useGeminiModels } from '../../helpers/gemini-model';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';

const V = { 'anthropic-version': '2023-06-01' };

/**
 * Anthropic's `message_start` carries the request's input tokens (its streaming document:
 * `"usage": {"input_tokens": 25, "output_tokens": 1}`). A translated upstream reports usage only at
 * the end, so the gateway's message_start said 0 and a client taking the input count from there read
 * 0 for every streamed answer. Now it carries the request counted as `count_tokens` counts it;
 * `message_delta` still carries the upstream's own count.
 */
describe('messages dialect: message_start input_tokens on translated streams', function () {
  this.timeout(30_000);
  let o: TestOrg;
  let h: Record<string, string>;
  let search: SearchUpstream;
  useGeminiModels({ bedrock: true });
  before(async () => {
    o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), ...V };
    search = await startSearchUpstream();
    await useSearchProvider(o.org.id, search, 'msg-start-count');
  });
  after(async () => {
    await search.close();
  });
  beforeEach(resetSim);
  const request = (model: string) => ({
    model,
    max_tokens: 64,
    system: 'You answer briefly.',
    tools: [{ name: 'lookup', description: 'Looks a word up', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
    messages: [{ role: 'user', content: 'How many input tokens does this request have, counted as count_tokens counts them?' }],
  });

  for (const model of ['sim-chat', 'test-gemini', 'sim-bedrock-nova']) {
    it(`${model}: message_start says what count_tokens says; message_delta the upstream's count`, async () => {
      const counted = await call('POST', '/v1/messages/count_tokens', { headers: h, json: request(model) });
      expect(counted.status, counted.text).to.equal(200);
      const s = await postSse('/v1/messages', h, { ...request(model), stream: true });
      expect(s.status, s.text).to.equal(200);
      expect(s.events.map((e) => e.event)[0]).to.equal('message_start');
      expect(s.events[0].data.message.usage.input_tokens).to.equal(counted.body.input_tokens).and.greaterThan(0);
      const delta = s.events.find((e) => e.event === 'message_delta')!.data;
      expect(delta.usage.input_tokens).to.be.a('number').and.greaterThan(0);
      expect(s.events.at(-1)!.event).to.equal('message_stop');
    });
  }

  for (const model of ['sim-chat', 'sim-claude']) {
    it(`${model} with the gateway's web search: message_start says what count_tokens says`, async () => {
      const body = { model, max_tokens: 200, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'search the web for bees' }] };
      const counted = await call('POST', '/v1/messages/count_tokens', { headers: h, json: body });
      const s = await postSse('/v1/messages', h, { ...body, stream: true });
      expect(s.status, s.text).to.equal(200);
      expect(s.events.some((e) => e.data.content_block?.type === 'server_tool_use'), 'the gateway searched').to.equal(true);
      expect(s.events[0].data.message.usage.input_tokens).to.equal(counted.body.input_tokens).and.greaterThan(0);
      expect(s.events.at(-1)!.event).to.equal('message_stop');
    });
  }

  it('an upstream failing after the first chunk: message_start (with the count) still opens the stream, then the error event', async () => {
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dropAfterChunks: 2, tokenDelayMs: 5 }) });
    const s = await postSse('/v1/messages', h, { ...request('sim-chat'), stream: true });
    expect(s.events[0].event).to.equal('message_start');
    expect(s.events[0].data.message.usage.input_tokens).to.be.greaterThan(0);
    expect(s.events.at(-1)!.event).to.equal('error');
  });

  it("an Anthropic-native upstream: its own message_start, passed on as it sent it", async () => {
    const json = await call('POST', '/v1/messages', { headers: h, json: request('sim-claude') });
    const s = await postSse('/v1/messages', h, { ...request('sim-claude'), stream: true });
    // the simulator's message_start as Anthropic sends it: its own count, output_tokens 1, its `inference_geo: "global"` (the
    // gateway's translation would say `not_available`), nothing added or taken away
    const cache_creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    const own = { input_tokens: json.body.usage.input_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation, output_tokens: 1, service_tier: 'standard', inference_geo: 'global' };
    expect(s.events[0].data.message.usage).to.deep.equal(own);
  });
});
