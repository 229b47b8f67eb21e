import { expect } from 'chai';
import OpenAI from 'openai';
import { bedrockThinkingSuite } from '../../helpers/bedrock-thinking-upstream';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

const TURNS = [{ think: [], then: [{ text: 'ok' }], stop: 'end_turn' }];

/**
 * `reasoning_effort` (chat), `reasoning.effort` (responses) and `output_config.effort` (messages) on
 * Bedrock deployments: Amazon Nova 2's `reasoningConfig`, Claude's `thinking`, refused (400 naming the
 * field, nothing sent) on a family AWS documents no form for.
 */
describe('bedrock: reasoning effort by model family', function () {
  this.timeout(30_000);
  const s = bedrockThinkingSuite(TURNS, { nova2: 'us.amazon.nova-2-lite-v1:0', llama: 'meta.llama3-70b-instruct-v1:0', claude: 'anthropic.claude-sonnet-4-20250514-v1:0', opus45: 'global.anthropic.claude-opus-4-5-20251101-v1:0' });

  it("Nova 2: reasoning_effort is reasoningConfig's maxReasoningEffort (minimal as low); none and an absent effort send none; xhigh refused", async () => {
    for (const [effort, sent] of [['high', 'high'], ['minimal', 'low']] as const) {
      await s.openai.chat.completions.create({ model: s.models.nova2, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: effort });
      expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.deep.equal({ reasoningConfig: { type: 'enabled', maxReasoningEffort: sent } });
    }
    await s.openai.chat.completions.create({ model: s.models.nova2, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'none' });
    expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.equal(undefined);
    const err = await s.openai.chat.completions.create({ model: s.models.nova2, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'xhigh' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal('reasoning_effort');
    expect(s.up.received).to.have.length(3);
  });

  it('Nova 2 at high: a temperature, top_p or maximum is 400 naming it (AWS refuses them beside maxReasoningEffort high), nothing sent or billed; lower efforts keep them in inferenceConfig', async () => {
    const ask = (extra: Record<string, unknown>) => s.openai.chat.completions.create({ model: s.models.nova2, messages: [{ role: 'user', content: 'hi' }], ...extra } as never).catch((e: unknown) => e);
    for (const [field, value] of [['temperature', 0.5], ['top_p', 0.9], ['max_tokens', 500], ['max_completion_tokens', 500]] as const) {
      const err = await ask({ reasoning_effort: 'high', [field]: value });
      expect(err, field).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('unsupported_parameter');
      expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal(field);
      const requestId = (err as InstanceType<typeof OpenAI.APIError>).headers!.get('x-service-request-id');
      expect(requestId).to.be.a('string');
      await usageSettled();
      expect(await UsageEvent.count({ where: { requestId: requestId! } })).to.equal(0);
    }
    // the responses dialect's client is named the field it sent
    const viaResponses = await s.openai.responses.create({ model: s.models.nova2, input: 'hi', reasoning: { effort: 'high' }, max_output_tokens: 500 }).catch((e: unknown) => e);
    expect(viaResponses).to.be.instanceOf(OpenAI.BadRequestError);
    expect((viaResponses as InstanceType<typeof OpenAI.APIError>).param).to.equal('max_output_tokens');
    expect(s.up.received).to.have.length(0);
    await ask({ reasoning_effort: 'high' });
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'high' } });
    expect(s.up.received[0].body.inferenceConfig).to.equal(undefined);
    await ask({ reasoning_effort: 'medium', temperature: 0.5, top_p: 0.9, max_tokens: 500 });
    expect(s.up.received[1].body.additionalModelRequestFields).to.deep.equal({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'medium' } });
    expect(s.up.received[1].body.inferenceConfig).to.deep.equal({ maxTokens: 500, temperature: 0.5, topP: 0.9 });
  });

  it('another family: 400 unsupported_parameter naming reasoning_effort (chat) or reasoning.effort mapped to it (responses), nothing sent or billed', async () => {
    const err = await s.openai.chat.completions.create({ model: s.models.llama, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'low' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('unsupported_parameter');
    expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal('reasoning_effort');
    const r = await s.openai.responses.create({ model: s.models.llama, input: 'hi', reasoning: { effort: 'low' } }).catch((e: unknown) => e);
    expect(r).to.be.instanceOf(OpenAI.BadRequestError);
    expect((r as InstanceType<typeof OpenAI.APIError>).code).to.equal('unsupported_parameter');
    expect((r as InstanceType<typeof OpenAI.APIError>).param, 'the field the responses client sent').to.equal('reasoning.effort');
    expect(s.up.received).to.have.length(0);
    await s.openai.chat.completions.create({ model: s.models.llama, messages: [{ role: 'user', content: 'hi' }] });
    expect(s.up.received[0].body.additionalModelRequestFields).to.equal(undefined);
  });

  it("Claude: the responses dialect's reasoning.effort and the messages dialect's output_config.effort become the thinking budget", async () => {
    await s.openai.responses.create({ model: s.models.claude, input: 'hi', reasoning: { effort: 'medium' } });
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 8192 } });
    await s.anthropic.messages.create({ model: s.models.claude, max_tokens: 4000, messages: [{ role: 'user', content: 'hi' }], output_config: { effort: 'low' } } as never);
    expect(s.up.received[1].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(s.up.received[1].body.inferenceConfig).to.deep.equal({ maxTokens: 4000 });
  });

  it("Claude Opus 4.5: the effort is also output_config.effort (low, medium, high) with anthropic_beta effort-2025-11-24, as AWS sends it, beside the thinking budget or the caller's thinking", async () => {
    const beta = { anthropic_beta: ['effort-2025-11-24'] };
    for (const [effort, budget, sent] of [['medium', 8192, 'medium'], ['minimal', 1024, 'low'], ['xhigh', 32000, 'high']] as const) {
      await s.openai.chat.completions.create({ model: s.models.opus45, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: effort });
      expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: budget }, output_config: { effort: sent }, ...beta });
    }
    await s.openai.chat.completions.create({ model: s.models.opus45, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'none' });
    expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.equal(undefined);
    await s.anthropic.messages.create({ model: s.models.opus45, max_tokens: 4000, messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'enabled', budget_tokens: 2000 }, output_config: { effort: 'low' } } as never);
    expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 2000 }, output_config: { effort: 'low' }, ...beta });
    // Sonnet 4 (older, no effort): the budget alone, as before
    await s.openai.chat.completions.create({ model: s.models.claude, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'medium' });
    expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 8192 } });
  });
});
