import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { seedBedrock } from '../providers/bedrock-setup';

/**
 * Anthropic's Message says which of the caller's `stop_sequences` ended it (`stop_reason:
 * "stop_sequence"` and `stop_sequence`, SDK 1.16 `Message.stop_sequence`: "a non-null string if one
 * of your custom stop sequences was generated"). On a translated upstream that reports it (Bedrock
 * Converse's `stopReason: "stop_sequence"` with Claude's `additionalModelResponseFields.stop_sequence`,
 * or the request's only sequence; an Anthropic-native deployment of a mixed pool) the gateway answered
 * `end_turn` and null, JSON and streamed, because chat's finish_reason is only `stop`.
 */
describe('messages dialect: the matched stop sequence on translated upstreams (official Anthropic client)', () => {
  let o: TestOrg;
  let client: Anthropic;
  before(async () => {
    await seedBedrock();
    o = await buildOrg(env().redis);
    client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  beforeEach(resetSim);

  /** The JSON Message, the SDK's accumulated stream, and the raw message_delta: each stop_reason and stop_sequence. */
  async function stops(model: string, stop_sequences: string[], prompt: string) {
    const params = { model, max_tokens: 200, stop_sequences, messages: [{ role: 'user' as const, content: prompt }] };
    const json = await client.messages.create(params);
    const streamed = await client.messages.stream(params).finalMessage();
    const raw = await postSse('/v1/messages', { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, { ...params, stream: true });
    const delta = raw.events.find((e) => e.data.type === 'message_delta')!.data.delta;
    return [json, streamed, delta].map((m) => ({ stop_reason: m.stop_reason, stop_sequence: m.stop_sequence }));
  }

  it('Claude on Bedrock: the sequence Converse reports among several, JSON and streamed', async () => {
    const got = await stops('sim-bedrock-claude', ['zzz', 'halt'], 'say one halt two');
    for (const g of got) expect(g).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'halt' });
    // the path that makes Converse report it was asked for
    expect(env().sim.log.entries[0].body).to.deep.include({ additionalModelResponseFieldPaths: ['/stop_sequence'] });
  });

  it('a non-Claude Bedrock model: the only sequence asked for; with several and none reported, end_turn', async () => {
    for (const g of await stops('sim-bedrock-nova', ['halt'], 'say one halt two')) expect(g).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'halt' });
    for (const g of await stops('sim-bedrock-nova', ['zzz', 'halt'], 'say one halt two')) expect(g).to.deep.equal({ stop_reason: 'end_turn', stop_sequence: null });
    // no sequence matched: end_turn as before
    for (const g of await stops('sim-bedrock-nova', ['zzz'], 'say one two')) expect(g).to.deep.equal({ stop_reason: 'end_turn', stop_sequence: null });
  });

  it('an Anthropic-native deployment of a mixed pool (translated path): its stop_sequence, JSON and streamed', async () => {
    const model = await poolModel([{ name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` }, simDeployment('spare', { priority: 1 })]);
    const got = await stops(model, ['zzz', 'halt'], 'say one halt two');
    // served by the Anthropic deployment (the pool's first tier); the pool is not all-Anthropic, so through the canonical form
    expect(env().sim.log.entries.map((e) => e.path)).to.deep.equal(['/v1/messages', '/v1/messages', '/v1/messages']);
    for (const g of got) expect(g).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'halt' });
  });
});
