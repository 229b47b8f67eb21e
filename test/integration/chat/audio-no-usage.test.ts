import { expect } from 'chai';
import { resetSim } from '../../helpers/harness';
import { ScriptedUpstream, chunk, completion } from '../../helpers/scripted-upstream';
import { countTextTokens } from '../../../shared/tokenizer/bounded';
import { billedRows, budgetedOrg as budgeted, chatJson as json, chatStreamed as streamed, settledAt } from '../../helpers/priced-chat';

const TEXT = { input_token: 1, output_token: 2 };
const AUDIO = { input_token: 16, output_token: 32 };
const OUTPUT = { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } };
const msgs = [{ role: 'user', content: 'Say something about a fox, please.' }];
const withAudio = [{ role: 'user', content: [{ type: 'text', text: 'what is said?' }, { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZFZm10IBAAAAABAAEA', format: 'wav' } }] }];
const ANSWER = 'The quick brown fox jumps over the lazy dog, twice over.';
/** An audio answer's message as OpenAI sends it (ChatCompletionResponseMessage.audio): the words in `transcript`, no text content. */
const audioMessage = { content: null, audio: { id: 'audio_s1', expires_at: 1, data: 'UklGRiQAAABXQVZF', transcript: ANSWER } };

/**
 * Audio asked on the platform's credential from an OpenAI-compatible upstream whose usage carries no
 * audio details (docs/catalog.md "Audio tokens"): no usage at all (the gateway counts the tokens,
 * an audio answer's transcript included), or counts without `*_tokens_details`. Every counted token
 * of a side asked in audio is billed at the audio price, output when audio output was asked, input
 * when `input_audio` parts were sent: never below what the platform's account may have paid.
 * Details present without `audio_tokens` mean none (the field's default in OpenAI's API document).
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

  it('a JSON audio answer without usage: the transcript is counted, and every counted output token billed at the audio output price', async () => {
    const body = completion(audioMessage, 'stop');
    delete (body as Record<string, unknown>).usage;
    up.next = [{ kind: 'json', body }];
    const o = await budgeted();
    const r = await json(o.key, Object.assign({ model, messages: msgs }, OUTPUT));
    expect(r.status, r.text).to.equal(200);
    expect(r.body.choices[0].message.audio.transcript).to.equal(ANSWER);
    const t = await billedAt(o, r.headers.get('x-service-request-id')!, TEXT.input_token, AUDIO.output_token);
    expect(t.output, 'the transcript counted').to.equal(answerOut);
    expect(r.body.usage).to.include({ prompt_tokens: t.input, completion_tokens: t.output });
  });

  it('a streamed audio answer without usage, input_audio sent: counted input at the audio input price, counted output at the audio output price', async () => {
    const words = ANSWER.split(/(?<= )/);
    up.next = [{ kind: 'sse', events: [chunk({ role: 'assistant', content: null }), ...words.map((w) => chunk({ audio: { id: 'audio_s1', transcript: w } })), chunk({}, 'stop')] }];
    const o = await budgeted();
    const s = await streamed(o.key, Object.assign({ model, messages: withAudio }, OUTPUT));
    expect(s.status, s.text).to.equal(200);
    const t = await billedAt(o, s.headers.get('x-service-request-id')!, AUDIO.input_token, AUDIO.output_token);
    expect(t.output).to.equal(answerOut);
    expect(t.input).to.be.greaterThan(0);
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
