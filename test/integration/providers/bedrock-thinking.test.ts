import { expect } from 'chai';
import crypto from 'crypto';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { BedrockThinkingUpstream, redactedReasoning, REDACTED_BYTES, signedReasoning } from '../../helpers/bedrock-thinking-upstream';
import { signatureOf } from '../../helpers/thinking-upstream';

const CLAUDE = 'anthropic.claude-sonnet-4-20250514-v1:0';
const TURNS = [
  { think: [signedReasoning('I need the weather.'), redactedReasoning], then: [{ toolUse: { toolUseId: 'tooluse_w1', name: 'weather', input: { city: 'Paris' } } }], stop: 'tool_use' },
  { think: [signedReasoning('It is sunny.')], then: [{ text: 'Sunny in Paris.' }], stop: 'end_turn' },
];
const weather = { type: 'function' as const, function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const SIGNED = { type: 'thinking', thinking: 'I need the weather.', signature: signatureOf('I need the weather.') };
const REDACTED = { type: 'redacted_thinking', data: REDACTED_BYTES };
const CALL = { id: 'tooluse_w1', type: 'function' as const, function: { name: 'weather', arguments: '{"city":"Paris"}' } };

type Msg = OpenAI.ChatCompletionMessageParam;
/** The tool-calling turn sent back (with its thinking_blocks unless `blocks` is empty), then the tool's result. */
const history = (blocks: unknown[] = [SIGNED, REDACTED]): Msg[] => [
  { role: 'user', content: 'Weather in Paris?' },
  { role: 'assistant', content: null, tool_calls: [CALL], ...(blocks.length ? { thinking_blocks: blocks } : {}) } as Msg,
  { role: 'tool', tool_call_id: 'tooluse_w1', content: '22C, sunny' },
];

/**
 * Claude's signed reasoning on Bedrock through the gateway with the official openai client, against a
 * Bedrock endpoint scripted to think only when asked (`reasoning_effort` → `thinking`) and to refuse,
 * as Bedrock does, a tool-result turn whose tool-using turn lost its reasoning.
 */
describe('bedrock: Claude reasoning (thinking_blocks and reasoning_effort)', function () {
  this.timeout(30_000);
  let up: BedrockThinkingUpstream;
  let client: OpenAI;
  let model: string;
  before(async () => {
    up = await new BedrockThinkingUpstream(TURNS).start();
    model = await up.model(`bedrock-think-${crypto.randomBytes(3).toString('hex')}`, CLAUDE);
    client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  beforeEach(() => (up.received = []));
  after(() => up.close());

  it('JSON: reasoning_effort is a thinking budget; the signed and redacted reasoning are thinking_blocks and go back before the tool use', async () => {
    const first = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weather], reasoning_effort: 'medium' });
    expect(up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 8192 } });
    expect(up.received[0].body.inferenceConfig).to.deep.equal({ maxTokens: 8192 + 4096 });
    const msg = first.choices[0].message as OpenAI.ChatCompletionMessage & { thinking_blocks?: unknown[]; reasoning_content?: string };
    expect(msg.thinking_blocks).to.deep.equal([SIGNED, REDACTED]);
    expect(msg.reasoning_content).to.equal('I need the weather.');
    expect(msg.tool_calls).to.deep.equal([CALL]);

    const second = await client.chat.completions.create({ model, messages: history(msg.thinking_blocks), tools: [weather], reasoning_effort: 'medium' });
    expect(second.choices[0].message.content).to.equal('Sunny in Paris.');
    expect(up.received[1].body.messages[1]).to.deep.equal({
      role: 'assistant',
      content: [signedReasoning('I need the weather.'), redactedReasoning, { toolUse: { toolUseId: 'tooluse_w1', name: 'weather', input: { city: 'Paris' } } }],
    });
  });

  it('streamed: each signed block whole at its signature, the redacted one as it comes; sent back they are accepted', async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weather], reasoning_effort: 'low', max_completion_tokens: 3000, stream: true });
    const blocks: unknown[] = [];
    let reasoning = '';
    for await (const c of stream) {
      const d = c.choices[0]?.delta as { thinking_blocks?: unknown[]; reasoning_content?: string } | undefined;
      blocks.push(...(d?.thinking_blocks ?? []));
      reasoning += d?.reasoning_content ?? '';
    }
    expect(up.received[0].path).to.match(/\/converse-stream$/);
    expect(up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(up.received[0].body.inferenceConfig).to.deep.equal({ maxTokens: 3000 });
    expect(blocks).to.deep.equal([SIGNED, REDACTED]);
    expect(reasoning).to.equal('I need the weather.');
    const again = await client.chat.completions.create({ model, messages: history(blocks), tools: [weather], reasoning_effort: 'low', max_completion_tokens: 3000, stream: true });
    let text = '';
    for await (const c of again) text += c.choices[0]?.delta?.content ?? '';
    expect(text).to.equal('Sunny in Paris.');
  });

  it('a tool-using turn sent back without its reasoning is refused by Bedrock (400), as the scripted endpoint checks', async () => {
    const err = await client.chat.completions.create({ model, messages: history([]), tools: [weather], reasoning_effort: 'medium' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('upstream_invalid_request');
    expect(String((err as Error).message)).to.include('must start with a thinking block');
  });

  it("refuses what thinking cannot take, before anything is sent: temperature, top_p below 0.95, a forced tool, a maximum at the minimum budget", async () => {
    const base = { model, messages: [{ role: 'user' as const, content: 'hi' }], reasoning_effort: 'high' as const };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ temperature: 0.2 }, 'temperature'],
      [{ top_p: 0.5 }, 'top_p'],
      [{ tools: [weather], tool_choice: 'required' }, 'tool_choice'],
      [{ max_tokens: 1024 }, 'max_tokens'],
    ];
    for (const [extra, param] of cases) {
      const err = await client.chat.completions.create({ ...base, ...extra } as never).catch((e: unknown) => e);
      expect(err, param).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.APIError>).code, param).to.equal('unsupported_parameter');
      expect((err as InstanceType<typeof OpenAI.APIError>).param, param).to.equal(param);
    }
    // an effort OpenAI does not document is its invalid_value before any adapter (openai-documented-fields.test.ts)
    const turbo = await client.chat.completions.create({ ...base, reasoning_effort: 'turbo' } as never).catch((e: unknown) => e);
    expect(turbo).to.be.instanceOf(OpenAI.BadRequestError);
    expect(turbo as InstanceType<typeof OpenAI.APIError>).to.deep.include({ code: 'invalid_value', param: 'reasoning_effort' });
    expect(up.received).to.have.length(0);
    await client.chat.completions.create({ ...base, temperature: 1, top_p: 0.95, max_tokens: 5000 });
    expect(up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 4999 } });
  });
});
