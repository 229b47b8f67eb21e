import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream, completion } from '../../helpers/scripted-upstream';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { billedRows, budgetedOrg as budgeted, chatJson as json, settledAt } from '../../helpers/priced-chat';
import { wav } from '../../helpers/audio-clips';

const TEXT = { input_token: 1, output_token: 2 };
const AUDIO = { input_token: 16, output_token: 32 };
const PRICES = { ...TEXT, audio_input_token: AUDIO.input_token, audio_output_token: AUDIO.output_token };
/** 20 seconds of 16 kHz 16-bit mono WAV: 640,044 bytes, 853,392 characters of base64 (over 100,000 tokens as text); 200 audio tokens. */
const CLIP = wav(20);
const CLIP_TOKENS = 200;
const messages = [{ role: 'user', content: [{ type: 'text', text: 'what is said?' }, { type: 'input_audio', input_audio: { data: CLIP, format: 'wav' } }] }];
const USAGE = { prompt_tokens: 220, completion_tokens: 8, total_tokens: 128, prompt_tokens_details: { audio_tokens: CLIP_TOKENS }, completion_tokens_details: { audio_tokens: 0 } };

/**
 * An `input_audio` clip counted by its duration (OpenAI: 1 token per 100 ms of input audio), not its
 * base64 text, in every count of a chat request's input (docs/keys.md, docs/catalog.md "Audio
 * tokens"): the context-window fit that chooses a fallback (api/dispatch/route.ts), a key's token
 * limit and a budget's hold (api/dispatch/limits.ts).
 */
describe('chat: an input_audio clip counted by its duration', function () {
  this.timeout(30_000);
  const up = new ScriptedUpstream('openai');
  const fallbackUp = new ScriptedUpstream('openai');
  let model: string;
  let fallback: string;
  beforeEach(() => {
    resetSim();
    up.reset();
    fallbackUp.reset();
  });
  before(async () => {
    await Promise.all([up.start(), fallbackUp.start()]);
    fallback = await fallbackUp.model({ prices: PRICES });
    // a context window far below the clip's base64 text, far above its audio tokens
    model = await up.model({ prices: PRICES, contextWindow: 20_000, fallbacks: [fallback] });
  });
  after(() => Promise.all([up.close(), fallbackUp.close()]));

  it('a 20-second clip on a model whose context window is below its base64 text, above its audio tokens: served by the model, not its fallback', async () => {
    up.next = [{ kind: 'json', body: completion({ content: 'Hello there.' }, 'stop', USAGE) }];
    fallbackUp.next = [{ kind: 'json', body: completion({ content: 'from the fallback' }, 'stop', USAGE) }];
    const o = await buildOrg(env().redis);
    const r = await json(o.key, { model, messages, max_tokens: 50 });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-service-fallback-model'), 'not rerouted').to.equal(null);
    expect([up.received.length, fallbackUp.received.length]).to.deep.equal([1, 0]);
    expect(up.received[0].body.messages[0].content[1].input_audio.data, 'sent as it came').to.equal(CLIP);
  });

  it('a budget of a dollar holds the clip at its audio tokens (its base64 text at the audio price was over 1,600,000 micro-dollars) and bills them at the audio price', async () => {
    up.next = [{ kind: 'json', body: completion({ content: 'Hello there.' }, 'stop', USAGE) }];
    const o = await budgeted();
    const r = await json(o.key, { model, messages, max_tokens: 50 });
    expect(r.status, r.text).to.equal(200);
    const { log } = await billedRows(r.headers.get('x-service-request-id')!);
    const cost = (220 - CLIP_TOKENS) * TEXT.input_token + CLIP_TOKENS * AUDIO.input_token + 8 * TEXT.output_token;
    expect(Number(log.cost_micros)).to.equal(cost);
    await settledAt(o, cost);
  });

  it("a key's token limit counts the clip's audio tokens, not its base64 text", async () => {
    up.next = [{ kind: 'json', body: completion({ content: 'Hello there.' }, 'stop', USAGE) }];
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { tpm: 5_000 });
    const r = await json(o.key, { model, messages, max_tokens: 50 });
    expect(r.status, r.text).to.equal(200);
    expect(Number(r.headers.get('x-ratelimit-remaining-tokens')), 'the hold: the text, the audio tokens and max_tokens').to.be.above(5_000 - 400);
  });
});
