import { expect } from 'chai';
import { itemsToMessages, responsesToCanonical, type ResponsesRequest } from '../../../api/dialects/responses/request';
import { canonicalToResponse, type ResponseFrame } from '../../../api/dialects/responses/response';
import { ResponsesStreamTranslator } from '../../../api/dialects/responses/stream';
import { NativeResponsesStream } from '../../../api/dialects/responses/native-stream';
import type { NativeTranscript } from '../../../api/dispatch/native-search/loop';
import type { CanonicalChunk, CanonicalCompletion } from '../../../api/dialects/canonical';
import { textChunks, toolCallCompletion, toolChunks } from './fixtures/openai';
import { ApiError } from '../../../shared/errors/ApiError';

/** Input items as in OpenAI's function-calling guide (Responses API). */
const toolRoundTrip = [
  { role: 'developer', content: 'Answer briefly.' },
  { role: 'user', content: [{ type: 'input_text', text: "What's the weather like in Paris today?" }, { type: 'input_image', image_url: 'https://example.com/paris.jpg', detail: 'low' }] },
  { type: 'reasoning', id: 'rs_1', summary: [] },
  { type: 'function_call', id: 'fc_12345xyz', call_id: 'call_12345xyz', name: 'get_weather', arguments: '{"latitude":48.8566,"longitude":2.3522}' },
  { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'get_weather', arguments: '{"latitude":41.9,"longitude":12.5}' },
  { type: 'function_call_output', call_id: 'call_12345xyz', output: '14' },
  { type: 'function_call_output', call_id: 'call_2', output: '19' },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Paris is 14°C.', annotations: [] }] },
];

describe('responses dialect: request → canonical', () => {
  it('translates input items: roles, parts, parallel function calls and their outputs', () => {
    expect(itemsToMessages(toolRoundTrip)).to.deep.equal([
      { role: 'system', content: 'Answer briefly.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: "What's the weather like in Paris today?" },
          { type: 'image_url', image_url: { url: 'https://example.com/paris.jpg', detail: 'low' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_12345xyz', type: 'function', function: { name: 'get_weather', arguments: '{"latitude":48.8566,"longitude":2.3522}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"latitude":41.9,"longitude":12.5}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_12345xyz', content: '14' },
      { role: 'tool', tool_call_id: 'call_2', content: '19' },
      { role: 'assistant', content: 'Paris is 14°C.' },
    ]);
  });

  it('puts instructions first, then the stored history, then the new turn; maps tools and options', () => {
    const req: ResponsesRequest = {
      model: 'm',
      input: 'and tomorrow?',
      instructions: 'Be terse.',
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} }, strict: true }],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      max_output_tokens: 50,
      temperature: 0.2,
      text: { format: { type: 'json_schema', name: 'w', schema: { type: 'object' }, strict: true } },
    };
    const history = [
      { role: 'user' as const, content: 'weather?' },
      { role: 'assistant' as const, content: 'sunny' },
    ];
    const { canonical, turn } = responsesToCanonical(req, history);
    expect(turn).to.deep.equal([{ role: 'user', content: 'and tomorrow?' }]);
    expect(canonical).to.deep.equal({
      model: 'm',
      messages: [{ role: 'system', content: 'Be terse.' }, ...history, { role: 'user', content: 'and tomorrow?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      max_completion_tokens: 50,
      temperature: 0.2,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' }, strict: true } },
    });
  });
});

const frame: ResponseFrame = { id: 'resp_1', createdAt: 1741476542, publicModel: 'pub', req: { model: 'pub', input: 'x' } };

describe('responses dialect: canonical → Response', () => {
  it('turns tool calls into function_call items and usage into Responses usage', () => {
    const { response, assistant } = canonicalToResponse(toolCallCompletion as CanonicalCompletion, frame);
    expect(response).to.include({ id: 'resp_1', object: 'response', status: 'completed', model: 'pub', created_at: 1741476542 });
    const out = response.output as Array<Record<string, unknown>>;
    expect(out).to.have.length(1);
    expect(out[0]).to.include({ type: 'function_call', call_id: 'call_abc123', name: 'get_current_weather', arguments: '{\n"location": "Boston, MA"\n}', status: 'completed' });
    expect(out[0].id).to.match(/^fc_/);
    expect(response.usage).to.deep.equal({ input_tokens: 82, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 17, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 99 });
    expect(assistant).to.deep.equal({ role: 'assistant', content: null, tool_calls: toolCallCompletion.choices[0].message.tool_calls });
  });
});

describe('responses dialect: stream translation', () => {
  const run = (chunks: unknown[]) => {
    const t = new ResponsesStreamTranslator(frame);
    const events = [...chunks.flatMap((c) => t.push(c as CanonicalChunk)), ...t.end()];
    return { events, t };
  };

  it('emits the text sequence event by event', () => {
    const { events } = run(textChunks);
    const msgId = (events[2].item as { id: string }).id;
    const strip = events.map(({ response, ...rest }) => (response ? { ...rest, status: (response as { status: string }).status } : rest));
    expect(strip).to.deep.equal([
      { type: 'response.created', sequence_number: 0, status: 'in_progress' },
      { type: 'response.in_progress', sequence_number: 1, status: 'in_progress' },
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { type: 'message', id: msgId, status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', sequence_number: 3, item_id: msgId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
      { type: 'response.output_text.delta', sequence_number: 4, item_id: msgId, output_index: 0, content_index: 0, delta: 'Hello', logprobs: [] },
      { type: 'response.output_text.delta', sequence_number: 5, item_id: msgId, output_index: 0, content_index: 0, delta: '!', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 6, item_id: msgId, output_index: 0, content_index: 0, text: 'Hello!', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 7, item_id: msgId, output_index: 0, content_index: 0, part: { type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] } },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: { type: 'message', id: msgId, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] }] } },
      { type: 'response.completed', sequence_number: 9, status: 'completed' },
    ]);
    const final = events.at(-1)!.response as { usage: { input_tokens: number; output_tokens: number }; output: unknown[] };
    expect(final.usage).to.include({ input_tokens: 9, output_tokens: 2 });
    expect(final.output).to.have.length(1);
  });

  it('gives the message and each function call their own output index', () => {
    const { events, t } = run(toolChunks);
    const brief = events.map((e) => `${e.type}${'output_index' in e ? `:${e.output_index}` : ''}`);
    expect(brief).to.deep.equal([
      'response.created',
      'response.in_progress',
      'response.output_item.added:0',
      'response.content_part.added:0',
      'response.output_text.delta:0',
      'response.output_text.done:0',
      'response.content_part.done:0',
      'response.output_item.done:0',
      'response.output_item.added:1',
      'response.function_call_arguments.delta:1',
      'response.function_call_arguments.delta:1',
      'response.function_call_arguments.done:1',
      'response.output_item.done:1',
      'response.output_item.added:2',
      'response.function_call_arguments.delta:2',
      'response.function_call_arguments.done:2',
      'response.output_item.done:2',
      'response.completed',
    ]);
    const done = events.find((e) => e.type === 'response.function_call_arguments.done')!;
    expect(done).to.include({ arguments: '{"location": "Paris"}', name: 'get_weather' });
    expect(t.final!.assistant).to.deep.equal({
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [
        { id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', type: 'function', function: { name: 'get_weather', arguments: '{"location": "Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"location": "Rome"}' } },
      ],
    });
  });

  it('streams text then a refusal as two parts of one message (content_index 0 and 1)', () => {
    const { events, t } = run([{ choices: [{ delta: { content: 'Well. ' } }] }, { choices: [{ delta: { refusal: 'No.' } }] }, { choices: [{ delta: {}, finish_reason: 'stop' }] }]);
    const brief = events.map((e) => `${e.type}${'content_index' in e ? `:${e.content_index}` : ''}`);
    expect(brief.slice(2)).to.deep.equal([
      'response.output_item.added',
      'response.content_part.added:0',
      'response.output_text.delta:0',
      'response.output_text.done:0',
      'response.content_part.done:0',
      'response.content_part.added:1',
      'response.refusal.delta:1',
      'response.refusal.done:1',
      'response.content_part.done:1',
      'response.output_item.done',
      'response.completed',
    ]);
    expect((events.find((e) => e.type === 'response.content_part.added' && e.content_index === 1)!.part)).to.deep.equal({ type: 'refusal', refusal: '' });
    const item = events.find((e) => e.type === 'response.output_item.done')!.item as { content: unknown[] };
    expect(item.content).to.deep.equal([{ type: 'output_text', text: 'Well. ', annotations: [], logprobs: [] }, { type: 'refusal', refusal: 'No.' }]);
    expect(t.final!.assistant).to.deep.equal({ role: 'assistant', content: 'Well. No.' });
  });

  it("a refusal alone: the web search loop's stream (native-stream.ts) sends the plain path's events, built in one place (event-writer.ts)", () => {
    const plain = run([{ choices: [{ delta: { refusal: 'No.' } }] }, { choices: [{ delta: {}, finish_reason: 'stop' }] }]).events;
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, prompt_tokens_details: { cached_tokens: 0 } };
    const t: NativeTranscript = { steps: [], usage, finish: 'stop', refusal: { text: 'No.' }, requests: { search: 0, fetch: 0 }, added: [] };
    const native = new NativeResponsesStream(frame, 'org_1').end(t).events;
    // the item's id and the closing Response (usage, ids) aside
    const shape = (events: Array<Record<string, unknown>>) =>
      events.filter((e) => !/^response\.(created|in_progress|completed)$/.test(e.type as string)).map((e) => JSON.parse(JSON.stringify(e).replace(/msg_[A-Za-z0-9]+/g, 'msg_x')) as unknown);
    expect(shape(native)).to.deep.equal(shape(plain));
    expect(shape(native).map((e) => (e as { type: string }).type)).to.deep.equal([
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
  });

  it('ends with response.incomplete when the output was cut at max_output_tokens', () => {
    const { events } = run([{ choices: [{ delta: { content: 'cut' }, finish_reason: 'length' }] }]);
    const last = events.at(-1)!;
    expect(last.type).to.equal('response.incomplete');
    expect(last.response).to.deep.include({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(events.find((e) => e.type === 'response.output_item.done')!.item).to.include({ type: 'message', status: 'incomplete' });
  });

  it('marks only the item that was cut incomplete: a message before a cut tool call stays completed (JSON)', () => {
    const cut = { choices: [{ message: { content: 'Checking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }, finish_reason: 'length' }] };
    const { response } = canonicalToResponse(cut as CanonicalCompletion, frame);
    expect((response.output as Array<{ type: string; status: string }>).map((i) => [i.type, i.status])).to.deep.equal([['message', 'completed'], ['function_call', 'incomplete']]);
    expect(response.status).to.equal('incomplete');
  });

  it('streams reasoning as a reasoning item before a tool call, each at its own output index; the stored turn leaves the reasoning out', () => {
    const { events, t } = run([
      { choices: [{ delta: { reasoning_content: 'Need ' } }] },
      { choices: [{ delta: { reasoning_content: 'the weather.' } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'get_weather', arguments: '{}' } }] } }] },
      { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
    ]);
    const brief = events.map((e) => `${e.type}${'output_index' in e ? `:${e.output_index}` : ''}`);
    expect(brief.slice(2)).to.deep.equal([
      'response.output_item.added:0',
      'response.content_part.added:0',
      'response.reasoning_text.delta:0',
      'response.reasoning_text.delta:0',
      'response.reasoning_text.done:0',
      'response.content_part.done:0',
      'response.output_item.done:0',
      'response.output_item.added:1',
      'response.function_call_arguments.delta:1',
      'response.function_call_arguments.done:1',
      'response.output_item.done:1',
      'response.completed',
    ]);
    const output = (events.at(-1)!.response as { output: Array<Record<string, unknown>> }).output;
    expect(output[0]).to.deep.include({ type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Need the weather.' }], status: 'completed' });
    expect(t.final!.assistant).to.deep.equal({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] });
  });

  it('a reasoning item cut at max_output_tokens, or by a failure, is incomplete', () => {
    const { events } = run([{ choices: [{ delta: { reasoning_content: 'Thinking and' }, finish_reason: 'length' }] }]);
    expect(events.at(-1)!.type).to.equal('response.incomplete');
    expect(events.find((e) => e.type === 'response.output_item.done')!.item).to.deep.include({ type: 'reasoning', status: 'incomplete' });
    const t = new ResponsesStreamTranslator(frame);
    t.push({ choices: [{ delta: { reasoning_content: 'Half a thought' } }] });
    const failed = t.failed(new ApiError(502, 'upstream_error', 'broken')).events;
    const output = (failed.at(-1)!.response as { output: Array<Record<string, unknown>> }).output;
    expect(output).to.have.length(1);
    expect(output[0]).to.deep.include({ type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Half a thought' }], status: 'incomplete' });
  });

  it('JSON: reasoning_content is a reasoning item first; reasoning_tokens are reported', () => {
    const c = { choices: [{ message: { content: 'Hi.', reasoning_content: 'Greet back.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 2 } } };
    const { response, assistant } = canonicalToResponse(c as CanonicalCompletion, frame);
    const output = response.output as Array<Record<string, unknown>>;
    expect(output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expect(output[0].id).to.match(/^rs_/);
    expect(output[0]).to.deep.include({ summary: [], content: [{ type: 'reasoning_text', text: 'Greet back.' }], status: 'completed' });
    expect((response.usage as { output_tokens_details: unknown }).output_tokens_details).to.deep.equal({ reasoning_tokens: 2 });
    expect(assistant).to.deep.equal({ role: 'assistant', content: 'Hi.' });
  });
});
