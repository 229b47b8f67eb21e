import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse, type SseEvent } from '../../helpers/sse-events';
import { expectAnthropic } from '../../helpers/conformance';
import { outboxDuring } from '../../helpers/usage';
import { ScriptedUpstream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';

/**
 * The messages dialect on an OpenAI-compatible upstream that answers what each test scripts: wire
 * shapes real upstreams send (vLLM, Ollama, OpenAI with a forced tool choice) and the simulator does not.
 */
const V = { 'anthropic-version': '2023-06-01' };
const tools = [
  { name: 'a', input_schema: { type: 'object', properties: {} } },
  { name: 'b', input_schema: { type: 'object', properties: {} } },
];

/** Blocks as `start:index:type:name`, deltas as `delta:index:text`, stops as `stop:index`. */
function blocks(events: SseEvent[]): string[] {
  return events.flatMap((e) => {
    const d = e.data;
    if (d.type === 'content_block_start') return [`start:${d.index}:${d.content_block.type}:${d.content_block.name ?? ''}`];
    if (d.type === 'content_block_delta') return [`delta:${d.index}:${d.delta.partial_json ?? d.delta.text ?? ''}`];
    if (d.type === 'content_block_stop') return [`stop:${d.index}`];
    return [];
  });
}

describe('messages dialect on a scripted OpenAI-compatible upstream', function () {
  this.timeout(30_000);
  const up = new ScriptedUpstream();
  let o: TestOrg;
  let h: Record<string, string>;
  let model: string;
  const req = (extra: Record<string, unknown> = {}) => ({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...extra });
  before(async () => {
    await up.start();
    model = await up.model();
    o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), ...V };
  });
  after(() => up.close());
  beforeEach(() => up.reset());

  describe('tool calls finished with `stop` (forced tool choice, older vLLM and Ollama)', () => {
    const call1 = { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } };

    it('answers stop_reason tool_use in JSON and in the stream', async () => {
      up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [call1] }, 'stop') });
      const r = await call('POST', '/v1/messages', { headers: h, json: req({ tools, tool_choice: { type: 'any' } }) });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.stop_reason).to.equal('tool_use');
      expect(r.body.content).to.deep.equal([{ type: 'tool_use', id: 'call_1', name: 'a', input: { x: 1 } }]);
      expectAnthropic('Message', r.body);

      up.next.push({
        kind: 'sse',
        events: [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...call1, function: { name: 'a', arguments: '' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] }), chunk({}, 'stop'), usageChunk()],
      });
      const s = await postSse('/v1/messages', h, req({ tools, stream: true }));
      expect(s.events.find((e) => e.data.type === 'message_delta')!.data.delta.stop_reason).to.equal('tool_use');
    });

    it("keeps the SDK's tool runner looping: the tool runs and its result goes back upstream", async () => {
      up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [call1] }, 'stop') });
      up.next.push({ kind: 'json', body: completion({ content: 'done' }, 'stop') });
      const ran: unknown[] = [];
      const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
      const tool = betaTool({ name: 'a', description: 'a tool', inputSchema: { type: 'object', properties: { x: { type: 'number' } } }, run: (input) => (ran.push(input), 'result-a') });
      const final = await client.beta.messages.toolRunner({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], tools: [tool], tool_choice: { type: 'any' } });
      expect(ran).to.deep.equal([{ x: 1 }]);
      expect(final.content).to.deep.equal([{ type: 'text', text: 'done' }]);
      expect(up.received).to.have.length(2);
      expect(up.received[1].body.messages.at(-1)).to.deep.equal({ role: 'tool', tool_call_id: 'call_1', content: 'result-a' });
    });
  });
  it('ends with an error event in every dialect when the upstream reports an error in the stream; nothing is billed', async () => {
    // vLLM's streaming failure: an `error` chunk, then [DONE]
    const failing = () => up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', content: 'partial ans' }), { error: { message: 'CUDA out of memory', type: 'InternalServerError', code: 500 } }] });
    const { result, records } = await outboxDuring(async () => {
      failing();
      const messages = await postSse('/v1/messages', h, req({ stream: true }));
      failing();
      const chat = await postSse('/v1/chat/completions', keyHeader(o.key), { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      failing();
      const responses = await postSse('/v1/responses', keyHeader(o.key), { model, stream: true, input: 'hi' });
      return { messages, chat, responses };
    });
    const m = result.messages.events;
    expect(m.at(-1)!.event).to.equal('error');
    expect(m.at(-1)!.data).to.deep.include({ type: 'error' });
    expect(m.at(-1)!.data.error).to.include({ type: 'api_error', code: 'upstream_error' });
    expect(m.at(-1)!.data.error.message).to.include('CUDA out of memory');
    expect(m.map((e) => e.data.type)).to.not.include.members(['message_delta', 'message_stop']);
    expect(result.chat.events.at(-1)!.data.error).to.include({ code: 'upstream_error' });
    expect(result.chat.events.some((e) => e.data?.choices?.[0]?.finish_reason)).to.equal(false);
    expect(result.responses.events.at(-1)!.data).to.include({ type: 'response.failed' });
    expect(result.responses.events.at(-1)!.data.response.error.message).to.include('CUDA out of memory');
    expect(result.responses.events.some((e) => e.data.type === 'response.completed')).to.equal(false);
    expect(records.filter((r) => r.model === model), 'nothing billed').to.deep.equal([]);
  });
  it('combines consecutive same-role turns, so tool results directly follow the one assistant turn that called them', async () => {
    up.next.push({ kind: 'json', body: completion({ content: 'done' }, 'stop') });
    const use = (id: string) => ({ type: 'tool_use', id, name: 'a', input: {} });
    const r = await call('POST', '/v1/messages', {
      headers: h,
      json: req({
        tools,
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'text', text: 'calling' }] },
          { role: 'assistant', content: [use('toolu_A')] },
          { role: 'assistant', content: [use('toolu_B')] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_A', content: 'ra' }, { type: 'text', text: 'and also' }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_B', content: 'rb' }] },
        ],
      }),
    });
    expect(r.status, r.text).to.equal(200);
    const fn = (id: string) => ({ id, type: 'function', function: { name: 'a', arguments: '{}' } });
    expect(up.received[0].body.messages).to.deep.equal([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'calling', tool_calls: [fn('toolu_A'), fn('toolu_B')] },
      { role: 'tool', tool_call_id: 'toolu_A', content: 'ra' },
      { role: 'tool', tool_call_id: 'toolu_B', content: 'rb' },
      { role: 'user', content: 'and also' },
    ]);
  });
  it("streams interleaved parallel tool calls as one block each, and the SDK's final message has both inputs", async () => {
    const tc = (index: number, args: string, start?: { id: string; name: string }) => ({ index, ...(start ? { id: start.id, type: 'function' } : {}), function: { ...(start ? { name: start.name } : {}), arguments: args } });
    up.next.push({
      kind: 'sse',
      events: [
        chunk({ role: 'assistant', tool_calls: [tc(0, '', { id: 'call_A', name: 'a' }), tc(1, '', { id: 'call_B', name: 'b' })] }),
        chunk({ tool_calls: [tc(0, '{"x":'), tc(1, '{"y":')] }),
        chunk({ tool_calls: [tc(0, '1}'), tc(1, '2}')] }),
        chunk({}, 'tool_calls'),
        usageChunk(),
      ],
    });
    const s = await postSse('/v1/messages', h, req({ tools, stream: true }));
    for (const e of s.events) expectAnthropic('StreamEvent', e.data);
    expect(blocks(s.events)).to.deep.equal(['start:0:tool_use:a', 'delta:0:{"x":', 'delta:0:1}', 'stop:0', 'start:1:tool_use:b', 'delta:1:{"y":2}', 'stop:1']);
    // Gemini-style: several calls on one index, each with its own id
    up.next.push({
      kind: 'sse',
      events: [chunk({ tool_calls: [tc(0, '{"x":1}', { id: 'call_A', name: 'a' })] }), chunk({ tool_calls: [tc(0, '{"y":2}', { id: 'call_B', name: 'b' })] }), chunk({}, 'tool_calls'), usageChunk()],
    });
    const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const final = await client.messages.stream(req({ tools }) as never).finalMessage();
    expect(final.content).to.deep.equal([
      { type: 'tool_use', id: 'call_A', name: 'a', input: { x: 1 } },
      { type: 'tool_use', id: 'call_B', name: 'b', input: { y: 2 } },
    ]);
  });
  it("refuses empty content with Anthropic's 400 before any lane or upstream, on both paths; a final assistant prefill may be empty", async () => {
    const empties = [
      [{ role: 'user', content: '' }],
      [{ role: 'user', content: [] }],
      [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [] }, { role: 'user', content: 'again' }],
      [{ role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'hi' }] }],
    ];
    env().sim.log.entries.length = 0;
    const { result, records } = await outboxDuring(async () => {
      const out = [];
      for (const m of [model, 'sim-claude']) for (const messages of empties) out.push(await call('POST', '/v1/messages', { headers: h, json: req({ model: m, messages }) }));
      return out;
    });
    for (const r of result) {
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.include({ type: 'invalid_request_error', code: 'invalid_request' });
    }
    expect(result[0].body.error.message).to.equal('messages.0: all messages must have non-empty content except for the optional final assistant message');
    expect(result[3].body.error.message).to.equal('messages.0.content.0: text content blocks must be non-empty');
    expect(up.received, 'translated upstream not called').to.have.length(0);
    expect(env().sim.log.entries, 'native upstream not called').to.have.length(0);
    expect(records, 'nothing billed').to.deep.equal([]);

    up.next.push({ kind: 'json', body: completion({ content: 'ok' }, 'stop') });
    const prefill = await call('POST', '/v1/messages', { headers: h, json: req({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: '' }] }) });
    expect(prefill.status, prefill.text).to.equal(200);
  });
  it('sends a document whose content source is a string as text (was refused with 400)', async () => {
    up.next.push({ kind: 'json', body: completion({ content: 'ok' }, 'stop') });
    const doc = { type: 'document', title: 'Notes', context: 'from the wiki', source: { type: 'content', content: 'the body' } };
    const r = await call('POST', '/v1/messages', { headers: h, json: req({ messages: [{ role: 'user', content: [doc, { type: 'text', text: 'summarise' }] }] }) });
    expect(r.status, r.text).to.equal(200);
    expect(up.received[0].body.messages).to.deep.equal([{ role: 'user', content: 'Notes\n\nfrom the wiki\n\nthe body\nsummarise' }]);
  });
  it("keeps strict: a strict tool's function and the structured output format go upstream with strict: true", async () => {
    up.next.push({ kind: 'json', body: completion({ content: '{}' }, 'stop') });
    const schema = { type: 'object', properties: { x: { type: 'string' } }, required: ['x'], additionalProperties: false };
    const r = await call('POST', '/v1/messages', { headers: h, json: req({ tools: [{ name: 'a', strict: true, input_schema: schema }, tools[1]], output_config: { format: { type: 'json_schema', schema } } }) });
    expect(r.status, r.text).to.equal(200);
    const sent = up.received[0].body;
    expect(sent.tools).to.deep.equal([
      { type: 'function', function: { name: 'a', parameters: schema, strict: true } },
      { type: 'function', function: { name: 'b', parameters: tools[1].input_schema } },
    ]);
    expect(sent.response_format).to.deep.equal({ type: 'json_schema', json_schema: { name: 'output', schema, strict: true } });
  });
  it("reports reasoning tokens as output_tokens_details.thinking_tokens, and vLLM's matched stop string as stop_sequence", async () => {
    const usage = { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, completion_tokens_details: { reasoning_tokens: 30 } };
    up.next.push({ kind: 'json', body: completion({ content: 'abc' }, 'stop', usage, { stop_reason: 'END' }) });
    const r = await call('POST', '/v1/messages', { headers: h, json: req({ stop_sequences: ['END'] }) });
    expect(r.status, r.text).to.equal(200);
    expectAnthropic('Message', r.body);
    expect(r.body).to.include({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    expect(r.body.usage.output_tokens_details).to.deep.equal({ thinking_tokens: 30 });

    up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', content: 'abc' }), chunk({}, 'stop', { stop_reason: 'END' }), usageChunk(usage)] });
    const s = await postSse('/v1/messages', h, req({ stream: true, stop_sequences: ['END'] }));
    for (const e of s.events) expectAnthropic('StreamEvent', e.data);
    const delta = s.events.find((e) => e.data.type === 'message_delta')!.data;
    expect(delta.delta).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'END', stop_details: null, container: null });
    expect(delta.usage.output_tokens_details).to.deep.equal({ thinking_tokens: 30 });

    // a stop_reason that is not one of the caller's sequences (another server's meaning) changes nothing
    up.next.push({ kind: 'json', body: completion({ content: 'abc' }, 'stop', undefined, { stop_reason: 'eos' }) });
    const other = await call('POST', '/v1/messages', { headers: h, json: req({ stop_sequences: ['END'] }) });
    expect(other.body).to.include({ stop_reason: 'end_turn', stop_sequence: null });
    expect(other.body.usage).to.have.property('output_tokens_details', null);
  });
  it('sends search_result blocks, in a turn and in a tool result, to the upstream as their text (were dropped); a malformed one is 400', async () => {
    up.next.push({ kind: 'json', body: completion({ content: 'ok' }, 'stop') });
    const found = { type: 'search_result', source: 'https://docs.example/x', title: 'X', content: [{ type: 'text', text: 'alpha' }, { type: 'text', text: 'beta' }], citations: { enabled: true } };
    const messages = [
      { role: 'user', content: [found, { type: 'text', text: 'q' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'a', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [found] }] },
    ];
    const r = await call('POST', '/v1/messages', { headers: h, json: req({ tools, messages }) });
    expect(r.status, r.text).to.equal(200);
    const text = 'X\nhttps://docs.example/x\n\nalpha\nbeta';
    expect(up.received[0].body.messages[0]).to.deep.equal({ role: 'user', content: `${text}\nq` });
    expect(up.received[0].body.messages[2]).to.deep.equal({ role: 'tool', tool_call_id: 'toolu_1', content: text });

    // Anthropic's SearchResultBlockParam requires source, title and text content: refused before any upstream, on every path
    for (const bad of [{ ...found, source: undefined }, { ...found, content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }]) {
      for (const m of [model, 'sim-claude']) {
        const refused = await call('POST', '/v1/messages', { headers: h, json: { ...req({ messages: [{ role: 'user', content: [bad] }] }), model: m } });
        expect(refused.status, refused.text).to.equal(400);
        expect(refused.body.error).to.include({ code: 'invalid_request', type: 'invalid_request_error' });
      }
    }
    expect(up.received).to.have.length(1);
  });
  it("reports usage with cache_creation and service_tier as Anthropic's answers carry them: JSON, streamed (the SDK's final message) and with native web search", async () => {
    const usage = { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, prompt_tokens_details: { cached_tokens: 40 } };
    const expected = { input_tokens: 60, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 40, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard', inference_geo: 'not_available', output_tokens_details: null, server_tool_use: null, speed: 'standard' };
    up.next.push({ kind: 'json', body: completion({ content: 'abc' }, 'stop', usage) });
    const r = await call('POST', '/v1/messages', { headers: h, json: req() });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.usage).to.deep.equal(expected);
    expectAnthropic('Message', r.body);

    up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', content: 'abc' }), chunk({}, 'stop'), usageChunk(usage)] });
    const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    const starts: unknown[] = [];
    stream.on('streamEvent', (e) => e.type === 'message_start' && starts.push(e.message.usage));
    expect((await stream.finalMessage()).usage).to.deep.equal(expected);
    expect(starts[0]).to.include({ service_tier: 'standard' }).and.to.have.deep.property('cache_creation', expected.cache_creation);

    up.next.push({ kind: 'json', body: completion({ content: 'abc' }, 'stop', usage) });
    const searched = await call('POST', '/v1/messages', { headers: h, json: req({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }) });
    expect(searched.status, searched.text).to.equal(200);
    expect(searched.body.usage).to.deep.include({ service_tier: 'standard', cache_creation: expected.cache_creation });
    expect(searched.body.usage.server_tool_use).to.deep.equal({ web_search_requests: 0, web_fetch_requests: 0 });
  });
  it("refuses a system prompt block that is not text (MessageCreateParams.system: text blocks only) on every path; text blocks with cache_control pass", async () => {
    const image = { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } };
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      for (const m of [model, 'sim-claude']) {
        const r = await call('POST', path, { headers: h, json: { ...req({ system: [{ type: 'text', text: 'be brief' }, image] }), model: m } });
        expect(r.status, r.text).to.equal(400);
        expect(r.body.error).to.deep.equal({ code: 'invalid_request', type: 'invalid_request_error', message: "'system[1].type' must be [text]" });
      }
    }
    expect(up.received).to.have.length(0);
    up.next.push({ kind: 'json', body: completion({ content: 'ok' }, 'stop') });
    const ok = await call('POST', '/v1/messages', { headers: h, json: req({ system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }] }) });
    expect(ok.status, ok.text).to.equal(200);
    expect(up.received[0].body.messages[0]).to.deep.equal({ role: 'system', content: 'be brief' });
  });
  it("leaves an upstream's reasoning text out of the thinking block when the request's thinking.display is omitted (Claude Code's), JSON and streamed", async () => {
    const omitted = { thinking: { type: 'adaptive', display: 'omitted' } };
    up.next.push({ kind: 'json', body: completion({ content: 'Answer', reasoning_content: 'secret steps' }, 'stop') });
    const r = await call('POST', '/v1/messages', { headers: h, json: req(omitted) });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.content).to.deep.equal([
      { type: 'thinking', thinking: '', signature: '' },
      { type: 'text', text: 'Answer' },
    ]);
    up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'secret' }), chunk({ reasoning_content: ' steps' }), chunk({ content: 'Answer' }), chunk({}, 'stop'), usageChunk()] });
    const s = await postSse('/v1/messages', h, req({ ...omitted, stream: true }));
    expect(s.text).to.not.include('secret');
    expect(blocks(s.events)).to.deep.equal(['start:0:thinking:', 'stop:0', 'start:1:text:', 'delta:1:Answer', 'stop:1']);
    // summarized (or no display): the reasoning is shown, as before
    up.next.push({ kind: 'json', body: completion({ content: 'Answer', reasoning_content: 'secret steps' }, 'stop') });
    const shown = await call('POST', '/v1/messages', { headers: h, json: req({ thinking: { type: 'adaptive', display: 'summarized' } }) });
    expect(shown.body.content[0]).to.deep.equal({ type: 'thinking', thinking: 'secret steps', signature: '' });
  });

  it("answers no thinking block for an upstream's reasoning when the request did not turn thinking on (absent, disabled, between_tools), JSON and streamed: content[0] is the text, indexes from 0", async () => {
    const call1 = { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } };
    for (const thinking of [undefined, { type: 'disabled' }, { type: 'between_tools' }]) {
      const what = JSON.stringify(thinking);
      up.next.push({ kind: 'json', body: completion({ content: 'Answer', reasoning_content: 'secret steps', tool_calls: [call1] }, 'tool_calls') });
      const r = await call('POST', '/v1/messages', { headers: h, json: req({ thinking, tools }) });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.content, what).to.deep.equal([
        { type: 'text', text: 'Answer' },
        { type: 'tool_use', id: 'call_1', name: 'a', input: { x: 1 } },
      ]);
      expectAnthropic('Message', r.body);
      const sse = [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'secret' }), chunk({ reasoning_content: ' steps' }), chunk({ content: 'Answer' }), chunk({ tool_calls: [{ index: 0, ...call1 }] }), chunk({}, 'tool_calls'), usageChunk()];
      up.next.push({ kind: 'sse', events: sse });
      const s = await postSse('/v1/messages', h, req({ thinking, tools, stream: true }));
      expect(s.text, what).to.not.include('secret');
      expect(s.text, what).to.not.include('thinking');
      expect(blocks(s.events), what).to.deep.equal(['start:0:text:', 'delta:0:Answer', 'stop:0', 'start:1:tool_use:a', 'delta:1:{"x":1}', 'stop:1']);
      for (const e of s.events) expectAnthropic('StreamEvent', e.data);
    }
    // the official SDK reads the text first, JSON and accumulated from the stream
    const sdk = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    up.next.push({ kind: 'json', body: completion({ content: 'Answer', reasoning_content: 'secret steps' }, 'stop') });
    const m = await sdk.messages.create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(m.content[0]).to.deep.equal({ type: 'text', text: 'Answer' });
    up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'secret' }), chunk({ content: 'Answer' }), chunk({}, 'stop'), usageChunk()] });
    const streamed = await sdk.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'disabled' } }).finalMessage();
    expect(streamed.content.map((b) => b.type)).to.deep.equal(['text']);
    expect(streamed.content[0]).to.include({ type: 'text', text: 'Answer' });
  });
  it("refuses a base64 image of a type Anthropic does not take (jpeg, png, gif, webp), in a turn or a tool result, on every path before any upstream", async () => {
    const bmp = { type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'Qk0=' } };
    const turns = [
      [{ role: 'user', content: [bmp, { type: 'text', text: 'what is it?' }] }],
      [
        { role: 'user', content: 'look' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'a', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [bmp] }] },
      ],
    ];
    for (const messages of turns) {
      for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
        for (const m of [model, 'sim-claude']) {
          const r = await call('POST', path, { headers: h, json: { ...req({ tools, messages }), model: m } });
          expect(r.status, r.text).to.equal(400);
          expect(r.body.error).to.include({ code: 'invalid_request', type: 'invalid_request_error' });
          expect(r.body.error.message).to.match(/source\.media_type' must be one of \[image\/jpeg, image\/png, image\/gif, image\/webp\]$/);
        }
      }
    }
    expect(up.received).to.have.length(0);
  });
});
