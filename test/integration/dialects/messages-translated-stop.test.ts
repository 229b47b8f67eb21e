import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { seedBedrock } from '../providers/bedrock-setup';
import { ScriptedUpstream, byStream } from '../../helpers/scripted-upstream';

/**
 * Anthropic's Message says which of the caller's `stop_sequences` ended it (`stop_reason:
 * "stop_sequence"` and `stop_sequence`, SDK 1.16 `Message.stop_sequence`: "a non-null string if one
 * of your custom stop sequences was generated"). On a translated upstream that reports it (Bedrock
 * Converse's `stopReason: "stop_sequence"` with Claude's `additionalModelResponseFields.stop_sequence`,
 * or the request's only sequence; an Anthropic-native deployment of a mixed pool) the gateway answered
 * `end_turn` and null, JSON and streamed, because chat's finish_reason is only `stop`. Likewise
 * `model_context_window_exceeded` (SDK 1.16 StopReason) came back as `max_tokens` (chat's `length`).
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
    const params = { model, max_tokens: 200, ...(stop_sequences.length ? { stop_sequences } : {}), messages: [{ role: 'user' as const, content: prompt }] };
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

  it('model_context_window_exceeded from an Anthropic deployment of a mixed pool stays that stop reason (chat: length, native_finish_reason), JSON and streamed', async () => {
    const up = new ScriptedUpstream('anthropic');
    await up.start();
    try {
      const provider = await up.model();
      const model = await poolModel([{ name: 'claude', provider, upstream: 'up-model' }, simDeployment('spare', { priority: 1 })]);
      const usage = { input_tokens: 9, output_tokens: 3 };
      const message = { id: 'msg_up', type: 'message', role: 'assistant', model: 'up-model', content: [{ type: 'text', text: 'cut off' }], stop_reason: 'model_context_window_exceeded', stop_sequence: null, usage };
      const events = [
        { type: 'message_start', message: { ...message, content: [], stop_reason: null } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'cut off' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'model_context_window_exceeded', stop_sequence: null }, usage: { output_tokens: 3 } },
        { type: 'message_stop' },
      ];
      up.otherwise = byStream(message, events);
      for (const g of await stops(model, [], 'a long conversation')) expect(g).to.deep.equal({ stop_reason: 'model_context_window_exceeded', stop_sequence: null });
      expect(up.received.map((r) => r.path)).to.deep.equal(['/v1/messages', '/v1/messages', '/v1/messages']);
      // the chat dialect still says length, and names the upstream's reason
      const chat = await fetch(`${env().gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }) }).then((r) => r.json() as Promise<{ choices: Array<Record<string, unknown>> }>);
      expect(chat.choices[0]).to.include({ finish_reason: 'length', native_finish_reason: 'model_context_window_exceeded' });
    } finally {
      await up.close();
    }
  });

  it('an Anthropic-native deployment of a mixed pool (translated path): its stop_sequence, JSON and streamed', async () => {
    const model = await poolModel([{ name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` }, simDeployment('spare', { priority: 1 })]);
    const got = await stops(model, ['zzz', 'halt'], 'say one halt two');
    // served by the Anthropic deployment (the pool's first tier); the pool is not all-Anthropic, so through the canonical form
    expect(env().sim.log.entries.map((e) => e.path)).to.deep.equal(['/v1/messages', '/v1/messages', '/v1/messages']);
    for (const g of got) expect(g).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'halt' });
  });
});
