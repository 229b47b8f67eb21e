import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { bedrockThinkingSuite, signedReasoning } from '../../helpers/bedrock-thinking-upstream';

const TURNS = [{ think: [signedReasoning('Let me think.')], then: [{ text: 'ok' }], stop: 'end_turn' }];
const hi = [{ role: 'user' as const, content: 'hi' }];

/**
 * Claude's thinking on Bedrock in the form each model takes (test/fixtures/vendor/bedrock/adaptive-thinking.md):
 * `reasoning_effort` as adaptive thinking with `output_config.effort` from Claude 4.6 on, a budget
 * before; the messages dialect's own `thinking` sent as it is to a Claude model (it wins over the
 * effort's budget), with the refusals of thinking on, and no effect on another family. The scripted
 * endpoint refuses a form the model does not take, as Bedrock does.
 */
describe('bedrock: adaptive thinking and the messages dialect thinking', function () {
  this.timeout(30_000);
  const s = bedrockThinkingSuite(TURNS, { opus47: 'us.anthropic.claude-opus-4-7', sonnet46: 'anthropic.claude-sonnet-4-6', sonnet45: 'anthropic.claude-sonnet-4-5-20250929-v1:0', llama: 'meta.llama3-70b-instruct-v1:0' });

  it('reasoning_effort on Claude 4.6 and later: thinking {type: adaptive} and output_config.effort (minimal as low); none sends nothing; older models keep the budget; the refusals of thinking on hold', async () => {
    for (const [model, effort, sent] of [['opus47', 'high', 'high'], ['opus47', 'minimal', 'low'], ['sonnet46', 'medium', 'medium']] as const) {
      const r = await s.openai.chat.completions.create({ model: s.models[model], messages: hi, reasoning_effort: effort });
      expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'adaptive' }, output_config: { effort: sent } });
      expect((r.choices[0].message as { reasoning_content?: string }).reasoning_content).to.equal('Let me think.');
    }
    await s.openai.chat.completions.create({ model: s.models.opus47, messages: hi, reasoning_effort: 'none' });
    expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.equal(undefined);
    await s.openai.chat.completions.create({ model: s.models.sonnet45, messages: hi, reasoning_effort: 'medium' });
    expect(s.up.received.at(-1)!.body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 8192 } });
    // no minimum budget on the adaptive form: a small maximum is sent as it is
    await s.openai.chat.completions.create({ model: s.models.opus47, messages: hi, reasoning_effort: 'low', max_completion_tokens: 500 });
    expect(s.up.received.at(-1)!.body.inferenceConfig).to.deep.equal({ maxTokens: 500 });
    // the refusals of thinking on hold for the adaptive form: a temperature other than 1 is 400, nothing sent
    const sent = s.up.received.length;
    const err = await s.openai.chat.completions.create({ model: s.models.opus47, messages: hi, reasoning_effort: 'high', temperature: 0.3 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('unsupported_parameter');
    expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal('temperature');
    expect(s.up.received).to.have.length(sent);
  });

  it("messages dialect: the caller's thinking goes to a Claude model as additionalModelRequestFields.thinking (winning over the effort's budget), and the answer's signed thinking comes back", async () => {
    const m = await s.anthropic.messages.create({ model: s.models.sonnet45, max_tokens: 4000, messages: hi, thinking: { type: 'enabled', budget_tokens: 2000 }, output_config: { effort: 'low' } } as never);
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 2000 } });
    expect(s.up.received[0].body.inferenceConfig).to.deep.equal({ maxTokens: 4000 });
    expect((m as Anthropic.Message).content[0]).to.deep.include({ type: 'thinking', thinking: 'Let me think.' });
    expect(((m as Anthropic.Message).content[0] as Anthropic.ThinkingBlock).signature).to.not.equal('');

    await s.anthropic.messages.create({ model: s.models.opus47, max_tokens: 4000, messages: hi, thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'max' } } as never);
    expect(s.up.received[1].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'max' } });

    // thinking disabled wins over the effort's budget on an older model
    await s.anthropic.messages.create({ model: s.models.sonnet45, max_tokens: 4000, messages: hi, thinking: { type: 'disabled' }, output_config: { effort: 'high' } } as never);
    expect(s.up.received[2].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'disabled' } });
  });

  it("messages dialect: the caller's thinking on with a temperature is 400 naming temperature (nothing sent); on another family it has no effect", async () => {
    const err = await s.anthropic.messages.create({ model: s.models.sonnet45, max_tokens: 4000, messages: hi, thinking: { type: 'enabled', budget_tokens: 2000 }, temperature: 0.2 } as never).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
    expect(JSON.stringify((err as InstanceType<typeof Anthropic.APIError>).error)).to.include('temperature');
    expect(s.up.received).to.have.length(0);
    const m = await s.anthropic.messages.create({ model: s.models.llama, max_tokens: 4000, messages: hi, thinking: { type: 'enabled', budget_tokens: 2000 } });
    expect(m.content.at(-1)).to.deep.include({ type: 'text', text: 'ok' });
    expect(s.up.received[0].body.additionalModelRequestFields).to.equal(undefined);
  });
  it("GET /v1/models (Anthropic's ModelInfo) reports thinking and the forms each Claude on Bedrock takes; another family: not supported", async () => {
    const forms = async (id: string) => (await s.anthropic.models.retrieve(id)).capabilities!.thinking;
    const form = (adaptive: boolean, enabled: boolean) => ({ supported: true, types: { adaptive: { supported: adaptive }, enabled: { supported: enabled } } });
    expect(await forms(s.models.opus47), 'Opus 4.7: adaptive only').to.deep.equal(form(true, false));
    expect(await forms(s.models.sonnet46), 'Sonnet 4.6: both').to.deep.equal(form(true, true));
    expect(await forms(s.models.sonnet45), 'Sonnet 4.5: enabled only').to.deep.equal(form(false, true));
    expect((await forms(s.models.llama)).supported, 'Llama: the field has no effect').to.equal(false);
  });
});
