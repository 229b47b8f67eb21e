import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { scriptedClaude } from '../../helpers/sdk-clients';

/**
 * A Claude model whose config lists the reasoning effort levels its upstream takes
 * (`config.reasoning_effort: ["low", "medium", "high"]`): a level outside the list is refused 400
 * `unsupported_parameter` naming the field the caller sent it in (chat `reasoning_effort`, messages
 * `output_config.effort`, responses `reasoning.effort`), before anything is sent; a listed level
 * is sent as `output_config.effort`; Anthropic's model info says which levels it takes. Through the
 * official SDKs.
 */
const message = { id: 'msg_e', type: 'message', role: 'assistant', model: 'up', content: [{ type: 'text', text: 'fine' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } };
const user = [{ role: 'user' as const, content: 'hi' }];
type OpenAIError = InstanceType<typeof OpenAI.BadRequestError>;

describe('reasoning effort levels listed in the model config', function () {
  this.timeout(30_000);
  const s = scriptedClaude(message);
  let model: string;
  before(async () => {
    model = await s.up.model({ config: { reasoning_effort: ['low', 'medium', 'high'] } });
  });

  it('chat completions: a listed level is sent, another refused naming reasoning_effort', async () => {
    s.up.received = [];
    await s.openai.chat.completions.create({ model, messages: user, reasoning_effort: 'high' });
    expect(s.up.received[0].body.output_config).to.deep.equal({ effort: 'high' });
    for (const effort of ['xhigh', 'minimal', 'none'] as const) {
      const err = await s.openai.chat.completions.create({ model, messages: user, reasoning_effort: effort }).catch((e: unknown) => e);
      expect(err, `${effort}: ${String(err)}`).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as OpenAIError).code).to.equal('unsupported_parameter');
      expect((err as OpenAIError).param).to.equal('reasoning_effort');
      expect((err as OpenAIError).message).to.include(`'${effort}'`);
    }
    expect(s.up.received, 'only the listed level sent').to.have.length(1);
  });

  it('the messages dialect (native bypass) refuses output_config.effort outside the list; a listed one goes on', async () => {
    s.up.received = [];
    const err = await s.anthropic.messages.create({ model, max_tokens: 10, messages: user, output_config: { effort: 'max' } }).catch((e: unknown) => e);
    expect(err, String(err)).to.be.instanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).message).to.include('output_config.effort');
    expect(s.up.received).to.have.length(0);
    const ok = await s.anthropic.messages.create({ model, max_tokens: 10, messages: user, output_config: { effort: 'low' } });
    expect(ok.content[0]).to.include({ type: 'text', text: 'fine' });
    expect(s.up.received[0].body.output_config).to.deep.equal({ effort: 'low' });
  });

  it('the Responses API refuses reasoning.effort outside the list naming it', async () => {
    s.up.received = [];
    const err = await s.openai.responses.create({ model, input: 'hi', reasoning: { effort: 'xhigh' } }).catch((e: unknown) => e);
    expect(err, String(err)).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as OpenAIError).code).to.equal('unsupported_parameter');
    expect((err as OpenAIError).param).to.equal('reasoning.effort');
    expect(s.up.received).to.have.length(0);
    const r = await s.openai.responses.create({ model, input: 'hi', reasoning: { effort: 'medium' } });
    expect(r.output_text).to.equal('fine');
    expect(s.up.received[0].body.output_config).to.deep.equal({ effort: 'medium' });
  });

  it("Anthropic's model info says which effort levels the model takes", async () => {
    const info = await s.anthropic.models.retrieve(model);
    const effort = info.capabilities!.effort;
    expect(effort.supported).to.equal(true);
    expect([effort.low, effort.medium, effort.high, effort.max, effort.xhigh].map((l) => l?.supported)).to.deep.equal([true, true, true, false, false]);
  });
});
