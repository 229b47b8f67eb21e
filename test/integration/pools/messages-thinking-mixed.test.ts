import { expect } from 'chai';
import crypto from 'crypto';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { poolModel } from '../../helpers/pool-models';
import { ScriptedUpstream, completion } from '../../helpers/scripted-upstream';
import { thinking, thinkingModel } from '../../helpers/thinking-upstream';
import { BedrockThinkingUpstream, signedReasoning } from '../../helpers/bedrock-thinking-upstream';

const THOUGHT = 'Weighing it up.';

/**
 * The messages dialect's `thinking` in a pool mixing kinds (the request is translated, not bypassed):
 * the deployment each request draws sends it when it is Claude (an Anthropic-native one as the
 * Messages body's `thinking`, a Bedrock Claude one as `additionalModelRequestFields.thinking`) and
 * answers its signed thinking; an OpenAI-compatible one never gets it (no effect there).
 */
describe('model pools: the messages dialect thinking reaches the Claude deployment drawn', function () {
  this.timeout(60_000);
  let native: ScriptedUpstream;
  let oa: ScriptedUpstream;
  let bedrock: BedrockThinkingUpstream;
  let model: string;
  let anthropic: Anthropic;
  before(async () => {
    native = await ScriptedUpstream.start('anthropic');
    native.otherwise = thinkingModel([{ think: [thinking(THOUGHT)], then: [{ type: 'text', text: 'native' }], stop: 'end_turn' }]);
    oa = await ScriptedUpstream.start('openai');
    oa.otherwise = () => ({ kind: 'json', body: completion({ role: 'assistant', content: 'openai' }, 'stop') });
    bedrock = await new BedrockThinkingUpstream([{ think: [signedReasoning(THOUGHT)], then: [{ text: 'bedrock' }], stop: 'end_turn' }]).start();
    const [n, o, b] = [await native.model(), await oa.model(), await bedrock.model(`bedrock-opus-${crypto.randomBytes(3).toString('hex')}`, 'us.anthropic.claude-opus-4-7')];
    model = await poolModel([
      { name: 'native', provider: n, upstream: 'up-model' },
      { name: 'oa', provider: o, upstream: 'up-model' },
      { name: 'bedrock', provider: b, upstream: 'us.anthropic.claude-opus-4-7' },
    ]);
    anthropic = new Anthropic({ apiKey: (await buildOrg(env().redis)).key, baseURL: env().gw.url, maxRetries: 0 });
  });
  after(async () => {
    await native.close();
    await oa.close();
    await bedrock.close();
  });

  it('each request: Anthropic-native and Bedrock Claude send the caller thinking and answer signed thinking; the OpenAI-compatible one gets no thinking field', async () => {
    const asked = { type: 'adaptive', display: 'summarized' };
    for (let i = 0; i < 40 && !(native.received.length && oa.received.length && bedrock.received.length); i++) {
      const m = await anthropic.messages.create({ model, max_tokens: 2000, messages: [{ role: 'user', content: 'think' }], thinking: asked } as never);
      const text = (m as Anthropic.Message).content.find((b) => b.type === 'text') as Anthropic.TextBlock;
      const thought = (m as Anthropic.Message).content.find((b) => b.type === 'thinking') as Anthropic.ThinkingBlock | undefined;
      if (text.text === 'openai') expect(thought).to.equal(undefined);
      else {
        expect(thought?.thinking, text.text).to.equal(THOUGHT);
        expect(thought?.signature).to.not.equal('');
      }
    }
    expect([native.received.length, oa.received.length, bedrock.received.length].every((n) => n > 0), 'every deployment was drawn').to.equal(true);
    for (const r of native.received) expect(r.body.thinking).to.deep.equal(asked);
    for (const r of bedrock.received) expect(r.body.additionalModelRequestFields).to.deep.equal({ thinking: asked });
    for (const r of oa.received) {
      expect(r.body).to.not.have.property('thinking');
      expect(r.body).to.not.have.property('anthropic_thinking');
    }
  });
});
