import { expect } from 'chai';
import { canonicalToMessages } from '../../../workers/providers/anthropic/to-messages';
import { openAiToolResults } from '../../../workers/providers/tool-results';
import { messageToCompletion } from '../../../workers/providers/anthropic/from-messages';
import { MessagesToChatStream } from '../../../workers/providers/anthropic/stream-to-chat';
import { messagesToCanonical, type MessagesRequest } from '../../../api/dialects/messages/request';
import { textStream, thinkingStream, toolStream, toolUseMessage, toolUseRequest } from './fixtures/anthropic';

describe('anthropic upstream: canonical → messages request', () => {
  it('translates an OpenAI function-calling conversation', () => {
    const body = {
      model: 'ignored',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Boston?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc123', type: 'function', function: { name: 'get_current_weather', arguments: '{\n"location": "Boston, MA"\n}' } }] },
        { role: 'tool', tool_call_id: 'call_abc123', content: '22C' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [{ type: 'function', function: { name: 'get_current_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      temperature: 1.7,
      stop: 'END',
      user: 'u1',
      n: 1,
      response_format: { type: 'json_object' },
    };
    expect(canonicalToMessages(body, 'claude-x')).to.deep.equal({
      model: 'claude-x',
      max_tokens: 4096,
      system: 'You are helpful.\n\nBe brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Boston?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_abc123', name: 'get_current_weather', input: { location: 'Boston, MA' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_abc123', content: '22C' }, { type: 'text', text: 'Thanks' }] },
      ],
      tools: [{ name: 'get_current_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      stop_sequences: ['END'],
      temperature: 1,
      metadata: { user_id: 'u1' },
    });
  });

  it('tool_choice none stays {type: none} alone (Anthropic\'s ToolChoiceNone), even with parallel_tool_calls false', () => {
    const body = { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] };
    expect(canonicalToMessages({ ...body, tool_choice: 'none', parallel_tool_calls: false }, 'claude-x').tool_choice).to.deep.equal({ type: 'none' });
    expect(canonicalToMessages({ ...body, tool_choice: 'auto', parallel_tool_calls: false }, 'claude-x').tool_choice).to.deep.equal({ type: 'auto', disable_parallel_tool_use: true });
  });

  it('a chat caller’s cache_control on text and image parts, system included, reaches Claude as the blocks’ cache_control (as Bedrock gets cache points)', () => {
    const mark = { type: 'ephemeral' };
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const out = canonicalToMessages(
      {
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Long policy.', cache_control: mark }] },
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: png }, cache_control: mark }, { type: 'text', text: 'What is it?', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
        ],
      },
      'claude-x',
    );
    expect(out.system).to.deep.equal([{ type: 'text', text: 'Long policy.', cache_control: mark }, { type: 'text', text: 'Be brief.' }]);
    expect(out.messages).to.deep.equal([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' }, cache_control: mark },
          { type: 'text', text: 'What is it?', cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
      },
    ]);
    expect(canonicalToMessages({ messages: [{ role: 'system', content: [{ type: 'text', text: 'Plain.' }] }, { role: 'user', content: 'hi' }] }, 'claude-x').system, 'no breakpoint: the text').to.equal('Plain.');
  });

  it('a failed tool result (is_error) is a tool_result with is_error, its text as it was; an OpenAI-compatible body gets it prefixed and no unknown fields', () => {
    const messages = [
      { role: 'user', content: 'run it' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'run', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'exit 1', is_error: true },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }], tool_media: ['toolu_1'] },
    ];
    expect((canonicalToMessages({ messages }, 'claude-x').messages as unknown[])[2]).to.deep.equal({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'exit 1' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }], is_error: true }],
    });
    expect(openAiToolResults({ model: 'm', messages }).messages).to.deep.equal([
      messages[0],
      messages[1],
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Error: exit 1' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
    ]);
    const plain = { model: 'm', messages: [messages[0]] };
    expect(openAiToolResults(plain)).to.equal(plain);
  });

  it('a chat of system messages alone becomes one user turn (Anthropic needs a message; OpenAI accepts it)', () => {
    const out = canonicalToMessages({ messages: [{ role: 'system', content: 'Say hi.' }, { role: 'developer', content: 'Be brief.' }] }, 'claude-x');
    expect(out.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'Say hi.\n\nBe brief.' }] }]);
    expect(out).to.not.have.property('system');
  });

  it('round-trips an Anthropic request through the canonical shape, the signed thinking block first as it was', () => {
    const back = canonicalToMessages(messagesToCanonical(toolUseRequest as unknown as MessagesRequest) as unknown as Record<string, unknown>, 'claude-sonnet-4-5');
    const expected = structuredClone(toolUseRequest) as unknown as Record<string, unknown>;
    expected.system = 'You are a weather bot.';
    expected.metadata = { user_id: 'user-123' };
    expect(back).to.deep.equal(expected);
  });
});

describe('anthropic upstream: Message → canonical completion', () => {
  it('translates text and tool_use, stop reason and usage (cached input included in prompt_tokens)', () => {
    const c = messageToCompletion(toolUseMessage, 'pub');
    expect(c).to.deep.include({ id: 'chatcmpl-msg_01Aq9w938a90dw8q', object: 'chat.completion', model: 'pub' });
    expect(c.choices).to.deep.equal([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: "I'll check the current weather in San Francisco for you.",
          tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' } }],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    expect(c.usage).to.deep.equal({ prompt_tokens: 572, completion_tokens: 89, total_tokens: 661, prompt_tokens_details: { cached_tokens: 100 } });
  });
});

describe('anthropic upstream: stream → canonical chunks', () => {
  const run = (events: unknown[]) => {
    const t = new MessagesToChatStream('pub');
    const chunks = events.flatMap((e) => t.push(e as never)) as Array<{ choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }> }>;
    return { deltas: chunks.map((c) => [c.choices[0].delta, c.choices[0].finish_reason]), usage: t.usageChunk() };
  };

  it('translates the reference text stream', () => {
    const { deltas, usage } = run(textStream);
    expect(deltas).to.deep.equal([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hello' }, null],
      [{ content: '!' }, null],
      [{}, 'stop'],
    ]);
    expect(usage).to.deep.include({ choices: [], model: 'pub', usage: { prompt_tokens: 25, completion_tokens: 15, total_tokens: 40, prompt_tokens_details: { cached_tokens: 0 } } });
  });

  it('opens with the role chunk (content null) as soon as a thinking block starts, before any of its text (display omitted: none comes)', () => {
    const t = new MessagesToChatStream('pub');
    const start = { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 5, output_tokens: 1 } } };
    expect(t.push(start as never), 'message_start alone sends nothing yet').to.deep.equal([]);
    const opened = t.push({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } } as never) as Array<{ choices: Array<{ delta: unknown }> }>;
    expect(opened.map((c) => c.choices[0].delta)).to.deep.equal([{ role: 'assistant', content: null }]);
    const signed = t.push({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } } as never) as Array<{ choices: Array<{ delta: unknown }> }>;
    expect(signed.map((c) => c.choices[0].delta)).to.deep.equal([{ thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'sig' }] }]);
  });

  it('translates the recorded tool-use stream into one tool call', () => {
    const { deltas, usage } = run(toolStream);
    expect(deltas).to.deep.equal([
      // a turn of tool calls alone: content null, as OpenAI streams it and as the JSON answer has it
      [{ role: 'assistant', content: null }, null],
      [{ tool_calls: [{ index: 0, id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA', type: 'function', function: { name: 'json', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '}' } }] }, null],
      [{}, 'tool_calls'],
    ]);
    expect((usage.usage as { completion_tokens: number }).completion_tokens).to.equal(47);
  });

  it('a tool call streamed with no argument text (input {}) gets arguments "{}" when its block stops', () => {
    const { deltas } = run([
      { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 3, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'now', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_2', name: 'then', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
    ]);
    expect(deltas.slice(1)).to.deep.equal([
      [{ tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'now', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, null],
      [{ tool_calls: [{ index: 1, id: 'toolu_2', type: 'function', function: { name: 'then', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 1, function: { arguments: '{"a":1}' } }] }, null],
      [{}, 'tool_calls'],
    ]);
  });

  it('translates thinking into reasoning_content, and the signed block into thinking_blocks at its signature_delta', () => {
    const { deltas } = run(thinkingStream);
    expect(deltas.slice(1)).to.deep.equal([
      [{ reasoning_content: 'Let me solve this step by step:' }, null],
      [{ thinking_blocks: [{ type: 'thinking', thinking: 'Let me solve this step by step:', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...' }] }, null],
      [{ content: '27 * 453 = 12,231' }, null],
      [{}, 'stop'],
    ]);
  });
});
