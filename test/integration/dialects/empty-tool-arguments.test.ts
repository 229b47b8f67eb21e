import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream, byStream } from '../../helpers/scripted-upstream';

/**
 * A tool called with no arguments on an Anthropic-native upstream: Anthropic streams the tool_use
 * block with input {} and an empty `partial_json` (its SDK reads an empty buffer as {}). Every
 * OpenAI answer must carry arguments "{}", JSON as streamed, so `JSON.parse` works on them.
 */
const events = [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'up', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} } },
  { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 12 } },
  { type: 'message_stop' },
];
const json = { id: 'msg_1', type: 'message', role: 'assistant', model: 'up', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 12 } };

describe('a tool call with no arguments from an Anthropic-native upstream', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let client: OpenAI;
  const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }];
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('anthropic');
    up.otherwise = byStream(json, events);
    model = await up.model();
    client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  it('chat completions: arguments "{}" in JSON and streamed (the SDK\'s finalChatCompletion)', async () => {
    const j = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'time?' }], tools });
    const s = await client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'time?' }], tools }).finalChatCompletion();
    for (const f of [j, s]) {
      const call = f.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
      expect(call.function).to.deep.equal({ name: 'get_time', arguments: '{}' });
      expect(f.choices[0].finish_reason).to.equal('tool_calls');
    }
  });

  it('responses: a function_call item with arguments "{}", streamed (finalResponse) and JSON', async () => {
    const rtools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} }, strict: false }];
    const s = await client.responses.stream({ model, input: 'time?', tools: rtools }).finalResponse();
    const j = await client.responses.create({ model, input: 'time?', tools: rtools });
    for (const r of [s, j]) {
      const call = r.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      expect(call).to.deep.include({ name: 'get_time', arguments: '{}', call_id: 'toolu_1' });
    }
  });
});
