import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';

/**
 * Some OpenAI-compatible servers stream each tool call whole, with its id but no `index`, and some leave
 * the choice's `index` out too. OpenAI numbers both, and openai 7's ChatCompletionStream refuses a
 * chunk without them: the gateway numbers them as OpenAI would (workers/providers/openai/stream-indexes.ts).
 */
const frame = { id: 'chatcmpl-u', object: 'chat.completion.chunk', created: 1, model: 'up' };
const events = [
  { ...frame, choices: [{ delta: { role: 'assistant', content: null } }] },
  // two calls whole in one chunk, no index on the choice or the calls
  {
    ...frame,
    choices: [
      {
        delta: {
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } },
          ],
        },
      },
    ],
  },
  // the rest of the second call's arguments: no id, no index
  { ...frame, choices: [{ delta: { tool_calls: [{ function: { arguments: '"Rome"}' } }] } }] },
  // a third call in a chunk of its own
  { ...frame, choices: [{ delta: { tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'get_time', arguments: '{}' } }] } }] },
  { ...frame, choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
  { ...frame, choices: [], usage: { prompt_tokens: 20, completion_tokens: 30, total_tokens: 50 } },
];
const tools: OpenAI.Chat.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
];
const expected = [
  { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
  { id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
  { id: 'call_c', name: 'get_time', arguments: '{}' },
];

describe('streamed tool calls an OpenAI-compatible upstream left unnumbered', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let key: string;
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('openai');
    up.otherwise = () => ({ kind: 'sse', events });
    model = await up.model();
    key = (await buildOrg(env().redis)).key;
  });
  after(() => up.close());

  it('chat completions: every chunk numbered as OpenAI numbers it; the official SDK (openai 7) streams the three calls whole', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    const s = client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'weather?' }], tools });
    s.on('chunk', (c) => chunks.push(c));
    const final = await s.finalChatCompletion();
    const calls = final.choices[0].message.tool_calls!.map((c) => {
      const f = c as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
      return { id: f.id, name: f.function.name, arguments: f.function.arguments };
    });
    expect(calls).to.deep.equal(expected);
    expect(final.choices[0].finish_reason).to.equal('tool_calls');
    const numbered = chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta.tool_calls ?? []).map((t) => [ch.index, t.index, t.id ?? null])));
    expect(numbered).to.deep.equal([[0, 0, 'call_a'], [0, 1, 'call_b'], [0, 1, null], [0, 2, 'call_c']]);
  });

  it('messages (translated): three tool_use blocks with their whole inputs, streamed through the SDK', async () => {
    const a = new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 });
    const m = await a.messages
      .stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'weather?' }], tools: tools.map((t) => ({ name: (t as OpenAI.Chat.ChatCompletionFunctionTool).function.name, input_schema: { type: 'object' as const } })) })
      .finalMessage();
    const uses = m.content.filter((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock[];
    expect(uses.map((u) => [u.id, u.name, u.input])).to.deep.equal([
      ['call_a', 'get_weather', { city: 'Paris' }],
      ['call_b', 'get_weather', { city: 'Rome' }],
      ['call_c', 'get_time', {}],
    ]);
    expect(m.stop_reason).to.equal('tool_use');
  });

  it('responses: three function_call items, streamed through the SDK', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const rtools: OpenAI.Responses.Tool[] = tools.map((t) => {
      const f = (t as OpenAI.Chat.ChatCompletionFunctionTool).function;
      return { type: 'function', name: f.name, parameters: f.parameters ?? null, strict: false };
    });
    const r = await client.responses.stream({ model, input: 'weather?', tools: rtools }).finalResponse();
    const calls = r.output.filter((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall[];
    expect(calls.map((c) => ({ id: c.call_id, name: c.name, arguments: c.arguments }))).to.deep.equal(expected);
  });
});
