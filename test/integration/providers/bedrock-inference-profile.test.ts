import { expect } from 'chai';
import crypto from 'crypto';
import OpenAI from 'openai';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { bedrockThinkingSuite, signedReasoning } from '../../helpers/bedrock-thinking-upstream';
import { upsertModel, upsertProvider } from '../../../shared/catalog/catalog-ops';

const TURNS = [{ think: [signedReasoning('Let me think.')], then: [{ text: 'ok' }], stop: 'end_turn' }];
const name = (what: string) => `bedrock-${what}-${crypto.randomBytes(3).toString('hex')}`;
const hi = [{ role: 'user' as const, content: 'hi' }];
const arn = (id: string) => `arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/${id}`;

/**
 * A Bedrock deployment whose upstream is an application inference profile's ARN (which does not name
 * its model): the deployment's `base_model` tells the worker which model it is, so the request takes
 * that model's form while the ARN is what is called; without it the ARN is no known family.
 */
describe('bedrock: application inference profiles and base_model', function () {
  this.timeout(30_000);
  const s = bedrockThinkingSuite(TURNS, { profiled: [arn('opus46abc'), 'anthropic.claude-opus-4-6-v1'], bare: arn('bare123xyz') });

  it("with base_model: the ARN is called, and the request takes the base model's form (Claude 4.6: adaptive thinking, output_config.effort)", async () => {
    const r = await s.openai.chat.completions.create({ model: s.models.profiled, messages: hi, reasoning_effort: 'high' });
    expect(s.up.received[0].path).to.equal(`/model/${encodeURIComponent(arn('opus46abc'))}/converse`);
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    expect((r.choices[0].message as { reasoning_content?: string }).reasoning_content).to.equal('Let me think.');
    // Claude's refusals with thinking on hold too: 400 naming the field, nothing sent
    const err = await s.openai.chat.completions.create({ model: s.models.profiled, messages: hi, reasoning_effort: 'high', temperature: 0.2 }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal('temperature');
    expect(s.up.received).to.have.length(1);
    const thinking = (await s.anthropic.models.retrieve(s.models.profiled)).capabilities!.thinking;
    expect(thinking).to.deep.equal({ supported: true, types: { adaptive: { supported: true }, enabled: { supported: true } } });
  });

  it('without base_model: the ARN names no family, so reasoning_effort is 400 naming it and thinking is not reported', async () => {
    const err = await s.openai.chat.completions.create({ model: s.models.bare, messages: hi, reasoning_effort: 'high' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal('reasoning_effort');
    expect(s.up.received).to.have.length(0);
    expect((await s.anthropic.models.retrieve(s.models.bare)).capabilities!.thinking!.supported).to.equal(false);
  });

  it('the management API takes base_model on a bedrock deployment and refuses it on another kind (400 invalid_request), as the catalog file does', async () => {
    const admin = await startAdmin();
    try {
      const { key } = await buildPlatformKey();
      const other = name('openai');
      await upsertProvider({ name: other, kind: 'openai', base_url: 'http://127.0.0.1:9/v1' } as never);
      const pool = (provider: string) => ({ model: s.models.bare, deployments: [{ name: 'p', provider, upstream: arn('bare123xyz'), base_model: 'anthropic.claude-sonnet-4-6' }] });
      const refused = await adminCall(admin.url, key, 'POST', '/admin/v1/inference-model-pools', pool(other));
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.error.code).to.equal('invalid_request');
      expect(refused.body.error.message).to.include('base_model');
      const file = { id: name('file'), deployments: pool(other).deployments, capabilities: { chat: true } };
      expect(String(await upsertModel(file).catch((e: unknown) => e))).to.include('base_model is read on bedrock deployments only');
      const set = await adminCall(admin.url, key, 'POST', '/admin/v1/inference-model-pools', pool(s.models.bare));
      expect(set.status, set.text).to.equal(201);
      expect(set.body.deployments[0]).to.include({ base_model: 'anthropic.claude-sonnet-4-6' });
    } finally {
      await admin.close();
    }
    s.up.profiles.set(arn('bare123xyz'), 'anthropic.claude-sonnet-4-6');
    await s.openai.chat.completions.create({ model: s.models.bare, messages: hi, reasoning_effort: 'low' });
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } });
  });
});
