import { expect } from 'chai';
import { messagesToCanonical, type MessagesRequest } from '../../../api/dialects/messages/request';
import { canonicalToMessage, reasoningShown, stopReason, type ReasoningShown } from '../../../api/dialects/messages/response';
import { MessagesStreamTranslator } from '../../../api/dialects/messages/stream';
import { anthropicErrorType } from '../../../api/dialects/messages/errors';
import { isVersionDate } from '../../../api/routes/messages/version';
import { errorBody } from '../../../api/middleware/error-body';
import { ApiError } from '../../../shared/errors/ApiError';
import type { CanonicalChunk, CanonicalCompletion } from '../../../api/dialects/canonical';
import { toolUseRequest } from './fixtures/anthropic';
import { textChunks, textCompletion, toolCallCompletion, toolChunks } from './fixtures/openai';

/** What SDK 1.17's Usage types as required-nullable and Anthropic sends (response.ts messagesUsage): the same on every answer of a translated upstream. */
const USAGE_REST = { cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard', inference_geo: 'not_available', output_tokens_details: null, server_tool_use: null, speed: 'standard' };
/** message_delta's required-nullable usage fields (MessageDeltaUsage). */
const DELTA_REST = { output_tokens_details: null, server_tool_use: null };

describe('messages dialect: request → canonical', () => {
  it('translates system, images, thinking, tool_use and tool_result turns and the sampling fields', () => {
    const c = messagesToCanonical(toolUseRequest as unknown as MessagesRequest);
    expect(c).to.deep.equal({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'You are a weather bot.' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' } },
            { type: 'text', text: 'What is the weather like in San Francisco?' },
          ],
        },
        {
          // the signed thinking block goes back to an Anthropic-native upstream only (the OpenAI adapter drops it)
          role: 'assistant',
          content: "I'll check the current weather in San Francisco for you.",
          thinking_blocks: [toolUseRequest.messages[1].content[0]],
          tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_01A09q90qw90lq917835lq9', content: '15 degrees' },
        { role: 'user', content: 'And tomorrow?' },
      ],
      max_completion_tokens: 1024,
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Get the current weather in a given location', parameters: toolUseRequest.tools[0].input_schema } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      stop: ['\n\nHuman:'],
      temperature: 0.5,
      top_k: 40,
      user: 'user-123',
    });
  });

  it('maps tool_choice any/tool/none and tool results with error flags and images', () => {
    const base = { model: 'm', max_tokens: 5, tools: [{ name: 't', input_schema: { type: 'object' } }] };
    const choice = (tc: unknown) => messagesToCanonical({ ...base, tool_choice: tc, messages: [{ role: 'user', content: 'x' }] } as MessagesRequest).tool_choice;
    expect(choice({ type: 'any' })).to.equal('required');
    expect(choice({ type: 'none' })).to.equal('none');
    expect(choice({ type: 'tool', name: 't' })).to.deep.equal({ type: 'function', function: { name: 't' } });
    const c = messagesToCanonical({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'a', is_error: true, content: [{ type: 'text', text: 'boom' }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
          ],
        },
      ],
    } as MessagesRequest);
    expect(c.messages).to.deep.equal([
      { role: 'tool', tool_call_id: 'a', content: 'boom', is_error: true },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }], tool_media: ['a'] },
    ]);
  });
});

describe('messages dialect: documents', () => {
  const user = (...content: unknown[]) => messagesToCanonical({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content }] } as MessagesRequest).messages[0].content;
  const png = { type: 'base64', media_type: 'image/png', data: 'AAAA' };

  it('reads a content source given as a string or as text and image blocks', () => {
    expect(user({ type: 'document', source: { type: 'content', content: 'plain' } }, { type: 'text', text: 'q' })).to.equal('plain\nq');
    expect(user({ type: 'document', title: 'T', source: { type: 'content', content: [{ type: 'text', text: 'x' }, { type: 'image', source: png }, { type: 'text', text: 'y' }] } })).to.deep.equal([
      { type: 'text', text: 'T\n\nx\ny' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    ]);
  });

  it("keeps a document's context: after the title of a text document, before a PDF", () => {
    expect(user({ type: 'document', title: 'T', context: 'CTX', source: { type: 'text', media_type: 'text/plain', data: 'body' } })).to.equal('T\n\nCTX\n\nbody');
    expect(user({ type: 'document', context: 'CTX', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } })).to.deep.equal([
      { type: 'text', text: 'CTX' },
      { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
    ]);
  });
});

describe('messages dialect: consecutive same-role turns', () => {
  it('combines them into one turn, around system messages too', () => {
    const c = messagesToCanonical({
      model: 'm',
      max_tokens: 5,
      messages: [
        { role: 'user', content: 'one' },
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'text', text: 'two' }] },
        { role: 'assistant', content: 'a' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { k: 1 } }] },
        { role: 'user', content: 'three' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'r' }] },
      ],
    } as MessagesRequest);
    expect(c.messages).to.deep.equal([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'one\ntwo' },
      { role: 'assistant', content: 'a', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"k":1}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'r' },
      { role: 'user', content: 'three' },
    ]);
  });
});

describe('messages dialect: canonical → Message', () => {
  it('turns tool calls into tool_use blocks with parsed input', () => {
    const m = canonicalToMessage(toolCallCompletion as CanonicalCompletion, 'public-model', 'msg_x');
    expect(m).to.deep.equal({
      id: 'msg_x',
      type: 'message',
      role: 'assistant',
      model: 'public-model',
      content: [{ type: 'tool_use', id: 'call_abc123', name: 'get_current_weather', input: { location: 'Boston, MA' } }],
      container: null,
      stop_reason: 'tool_use',
      stop_sequence: null,
      stop_details: null,
      usage: { input_tokens: 82, output_tokens: 17, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...USAGE_REST },
      diagnostics: null,
    });
  });

  it('turns text into a text block and reasoning into a thinking block only with thinking on (its text left out when omitted); cached input is reported apart', () => {
    const withReasoning = structuredClone(textCompletion) as unknown as CanonicalCompletion;
    withReasoning.choices[0].message.reasoning_content = 'hmm';
    withReasoning.usage = { prompt_tokens: 19, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 4 } };
    const text = { type: 'text', text: 'Hello! How can I assist you today?' };
    const m = canonicalToMessage(withReasoning, 'p', undefined, undefined, reasoningShown({ type: 'enabled', budget_tokens: 1024 }));
    expect(m.content).to.deep.equal([{ type: 'thinking', thinking: 'hmm', signature: '' }, text]);
    expect(canonicalToMessage(withReasoning, 'p', undefined, undefined, reasoningShown({ type: 'adaptive', display: 'omitted' })).content).to.deep.equal([{ type: 'thinking', thinking: '', signature: '' }, text]);
    // thinking absent, disabled or between_tools: Anthropic answers no thinking block, so content[0] is the text
    for (const thinking of [undefined, { type: 'disabled' }, { type: 'between_tools' }]) {
      expect(canonicalToMessage(withReasoning, 'p', undefined, undefined, reasoningShown(thinking)).content, JSON.stringify(thinking)).to.deep.equal([text]);
    }
    expect(canonicalToMessage(withReasoning, 'p').content, 'the default shows none').to.deep.equal([text]);
    expect(m.stop_reason).to.equal('end_turn');
    expect(m.usage).to.deep.equal({ input_tokens: 15, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, ...USAGE_REST });
  });

  it('maps every finish reason', () => {
    expect(['stop', 'length', 'tool_calls', 'content_filter', null].map((f) => stopReason(f as never))).to.deep.equal(['end_turn', 'max_tokens', 'tool_use', 'refusal', 'end_turn']);
  });

  it("maps reasoning tokens and vLLM's matched stop string; a matched stop with tool calls stays tool_use", () => {
    const c = structuredClone(textCompletion) as unknown as CanonicalCompletion;
    c.usage = { prompt_tokens: 10, completion_tokens: 8, completion_tokens_details: { reasoning_tokens: 3 } };
    (c.choices[0] as { stop_reason?: string }).stop_reason = '###';
    const m = canonicalToMessage(c, 'p', 'msg_1', ['###']);
    expect(m).to.include({ stop_reason: 'stop_sequence', stop_sequence: '###', stop_details: null });
    expect((m.usage as { output_tokens_details: unknown }).output_tokens_details).to.deep.equal({ thinking_tokens: 3 });
    expect(canonicalToMessage(c, 'p', 'msg_1')).to.include({ stop_reason: 'end_turn', stop_sequence: null });
    const tools = structuredClone(toolCallCompletion) as unknown as CanonicalCompletion;
    Object.assign(tools.choices[0], { finish_reason: 'stop', stop_reason: '###' });
    expect(canonicalToMessage(tools, 'p', 'msg_1', ['###'])).to.include({ stop_reason: 'tool_use', stop_sequence: null });
  });

  it('reports tool_use when tool calls came with `stop` or no finish reason', () => {
    expect(['stop', null, undefined, 'tool_calls', 'length'].map((f) => stopReason(f as never, true))).to.deep.equal(['tool_use', 'tool_use', 'tool_use', 'tool_use', 'max_tokens']);
    const forced = structuredClone(toolCallCompletion) as unknown as CanonicalCompletion;
    forced.choices[0].finish_reason = 'stop';
    expect(canonicalToMessage(forced, 'p').stop_reason).to.equal('tool_use');
    const t = new MessagesStreamTranslator('pub');
    t.push({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'stop' }] } as CanonicalChunk);
    expect(t.end().find((e) => e.type === 'message_delta')!.delta).to.deep.equal({ stop_reason: 'tool_use', stop_sequence: null, stop_details: null, container: null });
  });
});

describe('messages dialect: stream translation', () => {
  const run = (chunks: unknown[], reasoning: ReasoningShown = 'none') => {
    const t = new MessagesStreamTranslator('pub', 'msg_s', undefined, undefined, reasoning);
    return [...chunks.flatMap((c) => t.push(c as CanonicalChunk)), ...t.end()];
  };

  it('emits the text sequence event by event', () => {
    expect(run(textChunks)).to.deep.equal([
      {
        type: 'message_start',
        message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'pub', content: [], container: null, stop_reason: null, stop_sequence: null, stop_details: null, usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...USAGE_REST }, diagnostics: null },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '!' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container: null }, usage: { input_tokens: 9, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...DELTA_REST } },
      { type: 'message_stop' },
    ]);
  });

  it('gives text and each parallel tool call their own block index', () => {
    const events = run(toolChunks);
    expect(events.slice(1)).to.deep.equal([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"location":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ' "Paris"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"location": "Rome"}' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null, stop_details: null, container: null }, usage: { input_tokens: 32, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 8, ...DELTA_REST } },
      { type: 'message_stop' },
    ]);
  });

  const tc = (index: number, fields: { id?: string; name?: string; args?: string }) => ({
    index,
    ...(fields.id ? { id: fields.id, type: 'function' } : {}),
    function: { ...(fields.name ? { name: fields.name } : {}), arguments: fields.args ?? '' },
  });
  const calls = (...tool_calls: unknown[]) => ({ choices: [{ index: 0, delta: { tool_calls } }] });
  const blocks = (events: Array<Record<string, any>>) => // eslint-disable-line @typescript-eslint/no-explicit-any
    events.flatMap((e) =>
      e.type === 'content_block_start' ? [`start:${e.index}:${e.content_block.id}:${e.content_block.name}`] : e.type === 'content_block_delta' ? [`delta:${e.index}:${e.delta.partial_json}`] : e.type === 'content_block_stop' ? [`stop:${e.index}`] : [],
    );

  it('keeps interleaved parallel tool calls apart: one block each, the second held until the first is written', () => {
    const events = run([
      calls(tc(0, { id: 'A', name: 'a' }), tc(1, { id: 'B', name: 'b' })),
      calls(tc(0, { args: '{"x":' }), tc(1, { args: '{"y":' })),
      calls(tc(0, { args: '1}' }), tc(1, { args: '2}' })),
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ]);
    expect(blocks(events)).to.deep.equal(['start:0:A:a', 'delta:0:{"x":', 'delta:0:1}', 'stop:0', 'start:1:B:b', 'delta:1:{"y":2}', 'stop:1']);
  });

  it('opens a new block when a new id arrives on the same index', () => {
    const events = run([calls(tc(0, { id: 'A', name: 'a', args: '{"x":1}' })), calls(tc(0, { id: 'B', name: 'b', args: '{"y":2}' }))]);
    expect(blocks(events)).to.deep.equal(['start:0:A:a', 'delta:0:{"x":1}', 'stop:0', 'start:1:B:b', 'delta:1:{"y":2}', 'stop:1']);
  });

  it('gives a call without an id a unique toolu_ id, streamed and in JSON', () => {
    const ids = [run([calls(tc(0, { name: 'a', args: '{}' }))]), run([calls(tc(0, { name: 'a', args: '{}' }))])].map((ev) => (ev.find((e) => e.type === 'content_block_start') as unknown as { content_block: { id: string } }).content_block.id);
    for (const id of ids) expect(id).to.match(/^toolu_[0-9a-f]{24}$/);
    expect(ids[0]).to.not.equal(ids[1]);
    const noId = structuredClone(toolCallCompletion) as unknown as CanonicalCompletion;
    delete (noId.choices[0].message.tool_calls![0] as { id?: string }).id;
    expect((canonicalToMessage(noId, 'p').content as Array<{ id: string }>)[0].id).to.match(/^toolu_[0-9a-f]{24}$/);
  });

  it('streams reasoning as a thinking block before the text when thinking is on; without it, no thinking events and the text is block 0', () => {
    const chunks = [{ choices: [{ delta: { reasoning_content: 'think' } }] }, { choices: [{ delta: { content: 'answer' }, finish_reason: 'stop' }] }];
    const off = run(chunks);
    expect(off.map((e) => `${e.type}${'index' in e ? `:${e.index}` : ''}`)).to.deep.equal(['message_start', 'content_block_start:0', 'ping', 'content_block_delta:0', 'content_block_stop:0', 'message_delta', 'message_stop']);
    expect(JSON.stringify(off)).not.to.include('thinking');
    const events = run(chunks, 'text');
    expect(events.map((e) => `${e.type}${'index' in e ? `:${e.index}` : ''}`)).to.deep.equal([
      'message_start',
      'content_block_start:0',
      'ping',
      'content_block_delta:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_delta:1',
      'content_block_stop:1',
      'message_delta',
      'message_stop',
    ]);
    expect(events[3]).to.deep.equal({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think' } });
  });

  it('still opens and closes the message when the upstream sent nothing', () => {
    expect(run([]).map((e) => e.type)).to.deep.equal(['message_start', 'message_delta', 'message_stop']);
  });
});

describe('messages dialect: version header and error types', () => {
  it('accepts real dates only', () => {
    expect(['2023-06-01', '2026-10-21', '2024-02-29'].every(isVersionDate)).to.equal(true);
    expect(['2023-02-29', '2023-13-01', '2023-6-1', 'latest', '', '2023-06-01T00:00:00Z'].some(isVersionDate)).to.equal(false);
  });

  it("maps statuses to Anthropic's error types", () => {
    expect([400, 401, 403, 404, 413, 429, 500, 502, 503, 504].map(anthropicErrorType)).to.deep.equal([
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'request_too_large',
      'rate_limit_error',
      'api_error',
      'api_error',
      'overloaded_error',
      'timeout_error',
    ]);
  });

  it('gives other 4xx statuses (405, 408 body-read timeout, 409, 415, 422) invalid_request_error, as Anthropic documents', () => {
    expect([405, 408, 409, 415, 422].map(anthropicErrorType)).to.deep.equal(Array(5).fill('invalid_request_error'));
  });

  it("gives the model routes asked with anthropic-version (Anthropic's Models API) Anthropic's types, and OpenAI's without it", () => {
    const V = { 'anthropic-version': '2023-06-01' };
    const typesOn = (path: string, headers: Record<string, string>) =>
      [500, 502, 503, 529, 402].map((status) => errorBody(path, new ApiError(status, 'x', 'm', { param: 'limit' }), headers).error);
    for (const path of ['/v1/models', '/v1/models/sim-claude', '/a/svc_k/v1/models', '/a/svc_k/p/proj/v1/models/x', '/r/plan/V1/Models']) {
      const anthropic = typesOn(path, V);
      expect(anthropic.map((e) => e.type), path).to.deep.equal(['api_error', 'api_error', 'overloaded_error', 'overloaded_error', 'billing_error']);
      expect(anthropic.every((e) => !('param' in e)), `${path}: no OpenAI param`).to.equal(true);
      expect(typesOn(path, {}).map((e) => e.type), path).to.deep.equal(['server_error', 'server_error', 'server_error', 'server_error', 'insufficient_quota']);
    }
    // the header does not make another OpenAI route Anthropic's
    expect(errorBody('/v1/chat/completions', new ApiError(500, 'x', 'm'), V).error.type).to.equal('server_error');
    expect(errorBody('/v1/messages', new ApiError(500, 'x', 'm')).error.type).to.equal('api_error');
  });
});
