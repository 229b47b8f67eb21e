import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectAnthropic } from '../../helpers/conformance';
import { ScriptedUpstream, byStream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';

const NO = "I can't help with that.";
const DETAILS = { type: 'refusal', category: null, explanation: null };

/**
 * Anthropic's refusal carries `stop_details` (SDK 1.16 Message and message_delta: `stop_details:
 * RefusalStopDetails | null`, "Structured information about why model output stopped"), `category`
 * and `explanation` null when the refusal maps to no named category. A translated upstream's refusal
 * (OpenAI's `message.refusal`, or a `content_filter` finish) was answered `stop_reason: "refusal"`
 * without it: a client explaining the refusal from `stop_details` found nothing, and the SDK's
 * accumulated stream had it undefined. Other stop reasons stay without it.
 */
describe('messages dialect: a translated refusal carries stop_details', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let client: Anthropic;
  let key: string;
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('openai');
    model = await up.model();
    key = (await buildOrg(env().redis)).key;
    client = new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 });
  });
  after(() => up.close());
  const params = () => ({ model, max_tokens: 100, messages: [{ role: 'user' as const, content: 'do the bad thing' }] });

  const cases: Array<[string, () => void]> = [
    ['an OpenAI refusal', () => {
      up.otherwise = byStream(completion({ content: null, refusal: NO }, 'stop'), [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: NO }), chunk({}, 'stop'), usageChunk()]);
    }],
    ['a content_filter finish', () => {
      up.otherwise = byStream(completion({ content: 'Partial' }, 'content_filter'), [chunk({ role: 'assistant', content: 'Partial' }), chunk({}, 'content_filter'), usageChunk()]);
    }],
  ];
  for (const [name, script] of cases) {
    it(`${name}: stop_reason refusal with stop_details, JSON, streamed and through the SDK's stream`, async () => {
      script();
      const json = await client.messages.create(params());
      expect(json.stop_reason).to.equal('refusal');
      expect(json.stop_details).to.deep.equal(DETAILS);
      expectAnthropic('Message', json);
      const streamed = await client.messages.stream(params()).finalMessage();
      expect([streamed.stop_reason, streamed.stop_details]).to.deep.equal(['refusal', DETAILS]);
      const raw = await postSse('/v1/messages', { ...keyHeader(key), 'anthropic-version': '2023-06-01' }, { ...params(), stream: true });
      const delta = raw.events.find((e) => e.event === 'message_delta')!.data;
      expectAnthropic('StreamEvent', delta);
      expect(delta.delta).to.deep.equal({ stop_reason: 'refusal', stop_sequence: null, stop_details: DETAILS });
    });
  }

  it('an answer that is no refusal has no stop_details', async () => {
    up.otherwise = byStream(completion({ content: 'Fine.' }, 'stop'), [chunk({ role: 'assistant', content: 'Fine.' }), chunk({}, 'stop'), usageChunk()]);
    const json = await client.messages.create(params());
    expect(json.stop_reason).to.equal('end_turn');
    expect(json).not.to.have.property('stop_details');
    const raw = await postSse('/v1/messages', { ...keyHeader(key), 'anthropic-version': '2023-06-01' }, { ...params(), stream: true });
    expect(raw.events.find((e) => e.event === 'message_delta')!.data.delta).to.deep.equal({ stop_reason: 'end_turn', stop_sequence: null });
  });
});
