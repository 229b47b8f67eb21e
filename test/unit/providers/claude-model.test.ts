import { expect } from 'chai';
import { claudeModelOf, sameClaudeModel } from '../../../workers/providers/anthropic/other-model-thinking';

/** Which Claude model a deployment serves, across Anthropic's API and Bedrock: what decides whether a fallback keeps signed thinking. */
describe('the Claude model of a deployment (signed thinking on a fallback)', () => {
  it('reads Bedrock ids, profiles, ARNs and base models as Anthropic names the model', () => {
    const bedrock = (upstreamModel: string, baseModel?: string) => claudeModelOf({ kind: 'bedrock', upstreamModel, baseModel });
    expect(bedrock('anthropic.claude-3-5-sonnet-20240620-v1:0')).to.equal('claude-3-5-sonnet-20240620');
    expect(bedrock('us.anthropic.claude-sonnet-4-5-20250929-v1:0')).to.equal('claude-sonnet-4-5-20250929');
    expect(bedrock('anthropic.claude-opus-4-6-v1')).to.equal('claude-opus-4-6');
    expect(bedrock('arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0')).to.equal('claude-haiku-4-5-20251001');
    expect(bedrock('arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/abc', 'global.anthropic.claude-opus-4-6-v1')).to.equal('claude-opus-4-6');
    expect(bedrock('arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/abc')).to.equal(undefined);
    expect(bedrock('amazon.nova-pro-v1:0')).to.equal(undefined);
    expect(claudeModelOf({ kind: 'anthropic', upstreamModel: 'claude-sonnet-4-5-20250929' })).to.equal('claude-sonnet-4-5-20250929');
    expect(claudeModelOf({ kind: 'openai', upstreamModel: 'claude-sonnet-4-5-20250929' })).to.equal(undefined);
  });

  it('keeps the blocks only when every Claude deployment asked for serves the fallback’s model', () => {
    const api = { kind: 'anthropic', upstreamModel: 'claude-sonnet-4-5-20250929' };
    const bedrock = { kind: 'bedrock', upstreamModel: 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0' };
    expect(sameClaudeModel([api], bedrock)).to.equal(true);
    expect(sameClaudeModel([bedrock, { kind: 'openai', upstreamModel: 'gpt-5' }], api)).to.equal(true);
    expect(sameClaudeModel([api], { kind: 'anthropic', upstreamModel: 'claude-sonnet-4-5' }), 'an alias is not known to be the snapshot').to.equal(false);
    expect(sameClaudeModel([api, { kind: 'anthropic', upstreamModel: 'claude-opus-4-6' }], api)).to.equal(false);
    expect(sameClaudeModel([{ kind: 'openai', upstreamModel: 'gpt-5' }], api)).to.equal(false);
  });
});
