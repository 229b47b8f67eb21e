import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';

/**
 * OpenAI chat-completions fields on a model whose upstream speaks Anthropic's messages API, through
 * the official SDK: `reasoning_effort` is sent as Anthropic's `output_config.effort` (the
 * SDK's OutputConfig; `none` as `thinking: {type: "disabled"}`), and fields the messages API cannot
 * express and that change the answer are refused 400 `unsupported_parameter` naming the field, with
 * nothing sent upstream (they were dropped).
 */
const message = { id: 'msg_f', type: 'message', role: 'assistant', model: 'up', content: [{ type: 'text', text: 'fine' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } };
const user = [{ role: 'user' as const, content: 'hi' }];

describe('chat-completions request fields on an Anthropic-native upstream', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let noEffort: string;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('anthropic');
    up.otherwise = () => ({ kind: 'json', body: message });
    model = await up.model();
    noEffort = await up.model({ config: { reasoning_effort: false } });
    client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  it('reasoning_effort is output_config.effort (minimal takes low); temperature and a small max_tokens are kept as they were', async () => {
    up.received = [];
    for (const effort of ['low', 'medium', 'high', 'xhigh', 'max', 'minimal'] as const) {
      const r = await client.chat.completions.create({ model, messages: user, reasoning_effort: effort, temperature: 0.3, max_completion_tokens: 50 });
      expect(r.choices[0].message.content).to.equal('fine');
    }
    const sent = up.received.map((q) => q.body);
    expect(sent.map((b) => b.output_config)).to.deep.equal(['low', 'medium', 'high', 'xhigh', 'max', 'low'].map((effort) => ({ effort })));
    for (const b of sent) {
      expect(b).to.include({ temperature: 0.3, max_tokens: 50 });
      expect(b, 'no thinking budget: its constraints would refuse these requests').not.to.have.property('thinking');
    }
  });

  it('reasoning_effort none is thinking disabled, with no effort; an effort joins a JSON schema format', async () => {
    up.received = [];
    await client.chat.completions.create({ model, messages: user, reasoning_effort: 'none' });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    await client.chat.completions.create({ model, messages: user, reasoning_effort: 'low', response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
    const [none, both] = up.received.map((q) => q.body);
    expect(none.thinking).to.deep.equal({ type: 'disabled' });
    expect(none).not.to.have.property('output_config');
    expect(both.output_config).to.deep.equal({ effort: 'low', format: { type: 'json_schema', schema } });
  });

  it("a strict function tool is Anthropic's strict tool; one that is not strict is sent without it", async () => {
    up.received = [];
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    await client.chat.completions.create({
      model,
      messages: user,
      tools: [
        { type: 'function', function: { name: 'weather', parameters, strict: true } },
        { type: 'function', function: { name: 'time', parameters, strict: false } },
        { type: 'function', function: { name: 'news', parameters } },
      ],
    });
    expect(up.received[0].body.tools).to.deep.equal([
      { name: 'weather', input_schema: parameters, strict: true },
      { name: 'time', input_schema: parameters },
      { name: 'news', input_schema: parameters },
    ]);
  });

  it("the Responses API's reasoning.effort reaches output_config.effort too", async () => {
    up.received = [];
    const r = await client.responses.create({ model, input: 'hi', reasoning: { effort: 'medium' } });
    expect(r.output_text).to.equal('fine');
    expect(up.received[0].body.output_config).to.deep.equal({ effort: 'medium' });
  });

  it('a model configured without reasoning effort: chat refuses it 400 naming the field; the responses dialect leaves it out', async () => {
    up.received = [];
    const err = await client.chat.completions.create({ model: noEffort, messages: user, reasoning_effort: 'high' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('unsupported_parameter');
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('reasoning_effort');
    expect(up.received, 'nothing sent').to.have.length(0);
    const r = await client.responses.create({ model: noEffort, input: 'hi', reasoning: { effort: 'high' } });
    expect(r.output_text).to.equal('fine');
    expect(up.received).to.have.length(1);
    expect(up.received[0].body).not.to.have.property('output_config');
    expect(up.received[0].body).not.to.have.property('thinking');
  });

  // (every reasoning_effort OpenAI documents has an Anthropic form; any other is OpenAI's invalid_value before any adapter: openai-documented-fields.test.ts)
  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['audio output', { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
    ['non-text modalities', { modalities: ['text', 'audio'] }, 'modalities'],
    ['web_search_options', { web_search_options: {} }, 'web_search_options'],
    ['the legacy functions', { functions: [{ name: 'f', parameters: { type: 'object', properties: {} } }] }, 'functions'],
    ['the legacy function_call', { function_call: 'auto' }, 'function_call'],
    ['moderation', { moderation: { model: 'omni-moderation-latest' } }, 'moderation'],
    ['a verbosity other than medium', { verbosity: 'low' }, 'verbosity'],
    ['a response_format of an unknown type', { response_format: { type: 'grammar', grammar: 'x' } }, 'response_format'],
    ['a whitespace-only stop sequence', { stop: ['END', '\n'] }, 'stop'],
  ];
  for (const [what, extra, param] of refused) {
    it(`refuses ${what} 400 unsupported_parameter naming ${param}, sending nothing`, async () => {
      up.received = [];
      const err = await client.chat.completions.create({ model, messages: user, ...(extra as object) } as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
      expect(err, String(err)).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('unsupported_parameter');
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal(param);
      expect(up.received).to.have.length(0);
    });
  }

  it('thinking blocks come back as reasoning_content and their tokens as completion_tokens_details.reasoning_tokens, JSON and streamed', async () => {
    const usage = { input_tokens: 5, output_tokens: 9, output_tokens_details: { thinking_tokens: 7 } };
    const thought = { id: 'msg_t', type: 'message', role: 'assistant', model: 'up', content: [{ type: 'thinking', thinking: 'Let me see.', signature: 'sig' }, { type: 'text', text: 'fine' }], stop_reason: 'end_turn', stop_sequence: null, usage };
    up.next = [{ kind: 'json', body: thought }];
    const r = await client.chat.completions.create({ model, messages: user, reasoning_effort: 'high' });
    expect((r.choices[0].message as unknown as { reasoning_content?: string }).reasoning_content).to.equal('Let me see.');
    expect(r.choices[0].message.content).to.equal('fine');
    expect(r.usage).to.deep.include({ completion_tokens: 9, completion_tokens_details: { reasoning_tokens: 7 } });
    up.next = [
      {
        kind: 'sse',
        events: [
          { type: 'message_start', message: { ...thought, content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } },
          { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me see.' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'fine' } },
          { type: 'content_block_stop', index: 1 },
          { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9, output_tokens_details: { thinking_tokens: 7 } } },
          { type: 'message_stop' },
        ],
      },
    ];
    const stream = await client.chat.completions.create({ model, messages: user, reasoning_effort: 'high', stream: true, stream_options: { include_usage: true } });
    let reasoning = '';
    let text = '';
    let last: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      const d = c.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      reasoning += d?.reasoning_content ?? '';
      text += d?.content ?? '';
      if (c.usage) last = c.usage;
    }
    expect([reasoning, text]).to.deep.equal(['Let me see.', 'fine']);
    expect(last).to.deep.include({ completion_tokens: 9, completion_tokens_details: { reasoning_tokens: 7 } });
  });

  it('the defaults of those fields change nothing and are served: verbosity medium, text modalities, null effort; prediction is a latency hint, not sent', async () => {
    up.received = [];
    await client.chat.completions.create({
      model,
      messages: user,
      verbosity: 'medium',
      modalities: ['text'],
      reasoning_effort: null,
      stop: ['END'],
      prediction: { type: 'content', content: 'fine' },
    });
    expect(up.received).to.have.length(1);
    const b = up.received[0].body;
    expect(b.stop_sequences).to.deep.equal(['END']);
    for (const k of ['verbosity', 'modalities', 'prediction', 'output_config', 'thinking']) expect(b, k).not.to.have.property(k);
  });
});
