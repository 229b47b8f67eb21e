import { expect } from 'chai';
import OpenAI from 'openai';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { withSettings } from '../../helpers/settings';
import { leasesFreed } from '../../helpers/leases';

const tokens = (s: string) => encodeO200k(s).length;

/** `POST /v1/responses/input_tokens` (OpenAI's "Get input token counts"), through the official SDK. */
describe('POST /v1/responses/input_tokens', () => {
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  const count = (body: Record<string, unknown>) => call('POST', '/v1/responses/input_tokens', { headers: keyHeader(o.key), json: body });

  it("counts what the same request to /v1/responses would send, with the model's tokenizer, in OpenAI's shape, calling no upstream and billing nothing", async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const text = 'Tokenizers differ: naïve café façade — 東京 and émigrés ☃';
    const viaSdk = await client.responses.inputTokens.count({ model: 'sim-chat', input: text });
    expect(viaSdk).to.deep.equal({ object: 'response.input_tokens', input_tokens: 6 + tokens(text) });
    const raw = await count({ model: 'sim-chat', input: text });
    expect(raw.status, raw.text).to.equal(200);
    expectOpenAI('TokenCountsResource', raw.body);
    // another model's tokenizer profile counts differently (sim-claude: cl100k_base)
    const claude = await client.responses.inputTokens.count({ model: 'sim-claude', input: text });
    expect(claude.input_tokens).to.equal(6 + encodeCl100k(text).length).and.not.equal(viaSdk.input_tokens);
    // no model: the default profile (o200k_base)
    expect((await client.responses.inputTokens.count({ input: text })).input_tokens).to.equal(viaSdk.input_tokens);
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(before);
  });

  it('counts instructions, messages, tool calls and outputs, tools and images; a previous_response_id brings its conversation', async () => {
    const base = (await client.responses.inputTokens.count({ model: 'sim-chat', input: 'hello' })).input_tokens;
    expect(base).to.equal(6 + tokens('hello'));
    const withInstructions = (await client.responses.inputTokens.count({ model: 'sim-chat', input: 'hello', instructions: 'Answer in French.' })).input_tokens;
    expect(withInstructions - base, 'the instructions and their message framing').to.equal(tokens('Answer in French.') + 3);

    const tool = { type: 'function' as const, name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false };
    const withTool = (await client.responses.inputTokens.count({ model: 'sim-chat', input: 'hello', tools: [tool] })).input_tokens;
    expect(withTool - base).to.equal(tokens(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters })));

    const turns: OpenAI.Responses.ResponseInput = [
      { role: 'user', content: 'weather in Paris?' },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny, 21 C' },
    ];
    const calls = (await client.responses.inputTokens.count({ model: 'sim-chat', input: turns })).input_tokens;
    expect(calls).to.equal(3 + 3 * 3 + tokens('weather in Paris?') + tokens('get_weather {"city":"Paris"}') + tokens('sunny, 21 C'));

    const image: OpenAI.Responses.ResponseInput = [{ role: 'user', content: [{ type: 'input_text', text: 'hello' }, { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }] }];
    expect((await client.responses.inputTokens.count({ model: 'sim-chat', input: image })).input_tokens - base, 'an image at its fixed estimate').to.equal(1600);

    const first = await client.responses.create({ model: 'sim-chat', input: 'remember the number 42' });
    const answer = first.output_text;
    const followUp = (await client.responses.inputTokens.count({ model: 'sim-chat', input: 'hello', previous_response_id: first.id })).input_tokens;
    expect(followUp - base, 'the stored conversation: its user turn and the answer').to.equal(2 * 3 + tokens('remember the number 42') + tokens(answer));
  });

  it('refuses what /v1/responses refuses, before counting: an unknown model or previous response, a bad input, a hosted tool it cannot run, another method', async () => {
    const refused: Array<[Record<string, unknown>, number, string]> = [
      [{ model: 'no-such-model', input: 'x' }, 400, 'model_not_found'],
      [{ model: 'sim-chat', input: 'x', previous_response_id: 'resp_doesnotexist' }, 400, 'previous_response_not_found'],
      [{ model: 'sim-chat', input: 42 }, 400, 'invalid_type'],
      [{ model: 'sim-chat', input: 'x', conversation: 'conv_123' }, 404, 'conversation_not_found'],
      [{ model: 'sim-chat', input: [{ type: 'item_reference', id: 'msg_1' }] }, 404, 'item_not_found'],
      [{ model: 'sim-chat', input: 'x', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, 400, 'unsupported_tool'],
    ];
    for (const [body, status, code] of refused) {
      const r = await count(body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).to.equal(status);
      expect(r.body.error.code, JSON.stringify(body)).to.equal(code);
      expect(r.text).not.to.match(/\bat .+\.js:\d+/);
    }
    const get = await call('GET', '/v1/responses/input_tokens', { headers: keyHeader(o.key) });
    expect(get.status, 'GET names no stored response here: the path takes POST only').to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
    const unauthenticated = await call('POST', '/v1/responses/input_tokens', { json: { model: 'sim-chat', input: 'x' } });
    expect(unauthenticated.status).to.equal(401);
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('counts hosted web search requests without their hosted tool, and answers 429 when the count lane is full', async () => {
    const plain = (await client.responses.inputTokens.count({ model: 'sim-chat', input: 'news today?' })).input_tokens;
    const searching = await client.responses.inputTokens.count({ model: 'sim-chat', input: 'news today?', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search_preview' } });
    expect(searching.input_tokens).to.equal(plain);

    // the org's one count slot held (COUNT_TOKENS_ORG_CONCURRENCY=1): the next count waits for none
    const full = await buildOrg(env().redis);
    await withSettings({ COUNT_TOKENS_ORG_CONCURRENCY: '1' }, async () => {
      const { leases } = env().gw.ctx;
      const held = await leases.acquire(full.org.id, 'tokenize', 'count_tokens', 1);
      expect(held.granted).to.equal(true);
      try {
        const r = await call('POST', '/v1/responses/input_tokens', { headers: keyHeader(full.key), json: { model: 'sim-chat', input: 'x' } });
        expect(r.status, r.text).to.equal(429);
        expect(r.body.error.code).to.equal('CONCURRENT_REQUEST_LIMIT_EXCEEDED');
        expect(Number(r.headers.get('retry-after'))).to.be.greaterThan(0);
      } finally {
        if (held.granted) await leases.release(held.lease);
      }
      expect(await leasesFreed(leases, full.org.id, 'tokenize', 'count_tokens')).to.equal(true);
      const after = await call('POST', '/v1/responses/input_tokens', { headers: keyHeader(full.key), json: { model: 'sim-chat', input: 'x' } });
      expect(after.status, 'the slot given back').to.equal(200);
    });
  });
});
