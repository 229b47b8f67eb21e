import { expect } from 'chai';
import { resetSim } from '../../helpers/harness';
import { ScriptedUpstream, chunk, completion } from '../../helpers/scripted-upstream';
import { countTextTokens } from '../../../shared/tokenizer/bounded';
import { billedRows, budgetedOrg as budgeted, chatJson as json, chatStreamed as streamed, settledAt } from '../../helpers/priced-chat';
import { wav } from '../../helpers/audio-clips';

const TEXT = { input_token: 1, output_token: 2 };
const AUDIO = { input_token: 16, output_token: 32 };
const OUTPUT = { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } };
const msgs = [{ role: 'user', content: 'Say something about a fox, please.' }];
const withAudio = [{ role: 'user', content: [{ type: 'text', text: 'what is said?' }, { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZFZm10IBAAAAABAAEA', format: 'wav' } }] }];
const ANSWER = 'The quick brown fox jumps over the lazy dog, twice over.';
/** An audio answer's message as OpenAI sends it (ChatCompletionResponseMessage.audio): the words in `transcript`, no text content. */
const audioMessage = { content: null, audio: { id: 'audio_s1', expires_at: 1, data: 'UklGRiQAAABXQVZF', transcript: ANSWER } };
/** 10 seconds of input audio (16 kHz 16-bit mono WAV): 100 audio tokens at 1 a 100 ms, over 50,000 as base64 text. */
const CLIP = wav(10);
const withClip = [{ role: 'user', content: [{ type: 'text', text: 'what is said?' }, { type: 'input_audio', input_audio: { data: CLIP, format: 'wav' } }] }];
/** 2 seconds of the answer's audio (24 kHz 16-bit mono WAV): 40 audio tokens at 1 a 50 ms. */
const SPOKEN = wav(2, { sampleRate: 24_000 });
/** 1.5 seconds of pcm16 (24 kHz 16-bit mono) in three pieces, each base64 of its own, as a stream's deltas carry it: 30 audio tokens. */
const PCM_PIECES = [0, 1, 2].map(() => Buffer.alloc(24_000).toString('base64'));
const OUTPUT_PCM = { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'pcm16' } };

/**
 * Audio asked on the platform's credential from an OpenAI-compatible upstream whose usage carries no
 * audio details (docs/catalog.md "Audio tokens"). No usage at all: the gateway counts the tokens as
 * OpenAI bills them, an `input_audio` clip and the answer's audio by their duration (1 token per 100
 * ms in, 1 per 50 ms out) at the audio price, the transcript and the rest as text at the text price,
 * and reports the audio tokens in the usage details. Counts without `*_tokens_details`: every token of
 * a side asked in audio is billed at the audio price, output when audio output was asked, input when
 * `input_audio` parts were sent: never below what the platform's account may have paid. Details
 * present without `audio_tokens` mean none (the field's default in OpenAI's API document).
 */
describe('chat: audio asked and the upstream reports no audio details', function () {
  this.timeout(30_000);
  let model: string;
  const up = new ScriptedUpstream('openai');
  const answerOut = countTextTokens(undefined, ANSWER);
  beforeEach(() => {
    resetSim();
    up.reset();
  });
  before(async () => {
    await up.start();
    model = await up.model({ prices: { ...TEXT, audio_input_token: AUDIO.input_token, audio_output_token: AUDIO.output_token } });
  });
  after(() => up.close());

  /** The request was billed its input tokens at `inPrice`, its output tokens at `outPrice`: usage event, request log, ledger and budget. */
  async function billedAt(o: Awaited<ReturnType<typeof budgeted>>, rid: string, inPrice: number, outPrice: number) {
    const { event, log } = await billedRows(rid);
    const [i, out] = [Number(event.input_tokens), Number(event.output_tokens)];
    const cost = i * inPrice + out * outPrice;
    const extra = cost - (i * TEXT.input_token + out * TEXT.output_token);
    if (extra) expect((event.units as Record<string, number>).cost_micros, 'the difference to the text price').to.equal(extra);
    else expect(event.units ?? {}).not.to.have.property('cost_micros');
    expect(Number(log.cost_micros), 'the request log').to.equal(cost);
    await settledAt(o, cost);
    return { input: i, output: out };
  }

  /** The request was billed its `audio` tokens of each side at the audio price and the rest at the text price (as OpenAI bills them): usage event, request log, ledger and budget. */
  async function billedSplit(o: Awaited<ReturnType<typeof budgeted>>, rid: string, audio: { input: number; output: number }) {
    const { event, log } = await billedRows(rid);
    const [i, out] = [Number(event.input_tokens), Number(event.output_tokens)];
    const cost = (i - audio.input) * TEXT.input_token + audio.input * AUDIO.input_token + (out - audio.output) * TEXT.output_token + audio.output * AUDIO.output_token;
    expect((event.units as Record<string, number>).cost_micros, 'the difference to the text price').to.equal(audio.input * (AUDIO.input_token - TEXT.input_token) + audio.output * (AUDIO.output_token - TEXT.output_token));
    expect(Number(log.cost_micros), 'the request log').to.equal(cost);
    await settledAt(o, cost);
    return { input: i, output: out };
  }

  it('a JSON audio answer without usage: its audio by its duration at the audio output price, its transcript at the text price; the input clip by its duration', async () => {
    const body = completion({ content: null, audio: { id: 'audio_s1', expires_at: 1, data: SPOKEN, transcript: ANSWER } }, 'stop');
    delete (body as Record<string, unknown>).usage;
    up.next = [{ kind: 'json', body }];
    const o = await budgeted();
    const r = await json(o.key, Object.assign({ model, messages: withClip }, OUTPUT));
    expect(r.status, r.text).to.equal(200);
    expect(r.body.choices[0].message.audio).to.include({ transcript: ANSWER, data: SPOKEN });
    const t = await billedSplit(o, r.headers.get('x-service-request-id')!, { input: 100, output: 40 });
    expect(t.output, 'the transcript counted as text, the audio by its duration').to.equal(answerOut + 40);
    const text = countTextTokens(undefined, JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'what is said?' }, { type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }]));
    expect(t.input, 'the messages without the clip, and its 100 audio tokens').to.equal(text + 100);
    expect(r.body.usage).to.deep.equal({ prompt_tokens: t.input, completion_tokens: t.output, total_tokens: t.input + t.output, prompt_tokens_details: { audio_tokens: 100 }, completion_tokens_details: { audio_tokens: 40 } });
  });

  it('a streamed audio answer without usage: its pcm16 pieces by their duration, the transcript as text; the input clip by its duration', async () => {
    const words = ANSWER.split(/(?<= )/);
    const deltas = words.map((w, i) => chunk({ audio: Object.assign({ id: 'audio_s1', transcript: w }, i < PCM_PIECES.length ? { data: PCM_PIECES[i] } : {}) }));
    up.next = [{ kind: 'sse', events: [chunk({ role: 'assistant', content: null }), ...deltas, chunk({}, 'stop')] }];
    const o = await budgeted();
    const s = await streamed(o.key, Object.assign({ model, messages: withClip }, OUTPUT_PCM));
    expect(s.status, s.text).to.equal(200);
    const t = await billedSplit(o, s.headers.get('x-service-request-id')!, { input: 100, output: 30 });
    expect(t.output).to.equal(answerOut + 30);
    const usage = s.events.map((e) => e.data?.usage).filter(Boolean).pop();
    expect(usage).to.deep.include({ prompt_tokens: t.input, completion_tokens: t.output, prompt_tokens_details: { audio_tokens: 100 }, completion_tokens_details: { audio_tokens: 30 } });
  });

  it('without usage, audio output asked and none answered: no audio tokens, the text at the text price; a clip that cannot be read bounded by its size', async () => {
    const body = completion({ content: ANSWER }, 'stop');
    delete (body as Record<string, unknown>).usage;
    up.next = [{ kind: 'json', body }];
    const o = await budgeted();
    // 24 bytes of a WAV header cut short: 24 bytes at 8 kbit/s at most, 0.024 seconds, 1 token
    const r = await json(o.key, Object.assign({ model, messages: withAudio }, OUTPUT));
    expect(r.status, r.text).to.equal(200);
    await billedSplit(o, r.headers.get('x-service-request-id')!, { input: 1, output: 0 });
    expect(r.body.usage).to.deep.include({ prompt_tokens_details: { audio_tokens: 1 }, completion_tokens_details: { audio_tokens: 0 } });
  });

  it('usage counts without details: every token of a side asked in audio at its audio price (input_audio sent, output asked; output only)', async () => {
    for (const [messages, inPrice] of [[withAudio, AUDIO.input_token], [msgs, TEXT.input_token]] as const) {
      up.next = [{ kind: 'json', body: completion(audioMessage, 'stop', { prompt_tokens: 40, completion_tokens: 25, total_tokens: 65 }) }];
      const o = await budgeted();
      const r = await json(o.key, Object.assign({ model, messages }, OUTPUT));
      expect(r.status, r.text).to.equal(200);
      const t = await billedAt(o, r.headers.get('x-service-request-id')!, inPrice, AUDIO.output_token);
      expect(t).to.deep.equal({ input: 40, output: 25 });
    }
  });

  it('details reported without audio_tokens mean none (its default): the text price', async () => {
    const usage = { prompt_tokens: 40, completion_tokens: 25, total_tokens: 65, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
    up.next = [{ kind: 'json', body: completion(audioMessage, 'stop', usage) }];
    const o = await budgeted();
    const r = await json(o.key, Object.assign({ model, messages: withAudio }, OUTPUT));
    expect(r.status, r.text).to.equal(200);
    await billedAt(o, r.headers.get('x-service-request-id')!, TEXT.input_token, TEXT.output_token);
  });
});
