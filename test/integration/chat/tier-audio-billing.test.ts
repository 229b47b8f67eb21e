import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { rndId } from '../../helpers/pool-models';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { billedRows, budgetedOrg as budgeted, chatJson as json, chatStreamed as streamed, sentTo as sent, settledAt } from '../../helpers/priced-chat';

const withAudio = [{ role: 'user', content: [{ type: 'text', text: 'what is said?' }, { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZFZm10IBAAAAABAAEA', format: 'wav' } }] }];
const OUTPUT = { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } };
type Price = { input_token: number; output_token: number };
const LIST = { input_token: 1, output_token: 2 };
const AUDIO = { input_token: 16, output_token: 32 };
const PRIORITY = { input_token: 3, output_token: 5 };
const FLEX = { input_token: 0.5, output_token: 1 };
const audioPrices = (a: Price) => ({ audio_input_token: a.input_token, audio_output_token: a.output_token });

type Usage = { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { audio_tokens?: number }; completion_tokens_details?: { audio_tokens?: number } };

/** What an answer of `usage` costs: its text tokens at `text`, its audio tokens at `audio` (micro-dollars). */
function costOf(usage: Usage, text: Price, audio: Price): number {
  const a = { input: usage.prompt_tokens_details?.audio_tokens ?? 0, output: usage.completion_tokens_details?.audio_tokens ?? 0 };
  expect(a.input, 'audio input tokens reported').to.be.greaterThan(0);
  expect(a.output, 'audio output tokens reported').to.be.greaterThan(0);
  return (usage.prompt_tokens - a.input) * text.input_token + a.input * audio.input_token + (usage.completion_tokens - a.output) * text.output_token + a.output * audio.output_token;
}

/**
 * A chat request asking audio and a priced OpenAI service tier on the platform's credential
 * (docs/catalog.md "Service tiers", "Audio tokens"): tiers price text tokens only, so an answer
 * served on the tier is billed its text tokens at the tier's price and its audio tokens at the audio
 * price, not the audio price plus the tier's difference to the list price, whether the tier was
 * asked or the project's tier served a request without one; JSON and streamed, on the model asked
 * for and on a fallback with prices of its own; request log, ledger and budget agree.
 */
describe('chat: audio tokens on a priced service tier are billed at the audio price', function () {
  this.timeout(30_000);
  let model: string;
  let up: string;
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());
  before(async () => {
    [model, up] = [`tier-audio-${rndId()}`, `sim-tier-audio-${rndId()}`];
    await upsertModel({ id: model, provider: 'simulator', upstream: up, capabilities: { chat: true }, prices: { ...LIST, ...audioPrices(AUDIO), service_tiers: { priority: PRIORITY, flex: FLEX } } });
    await bumpEpoch(env().redis);
  });

  /** The request's billed cost is `expected` everywhere: the request log, and the difference to the list price on the usage event. */
  async function billedAt(rid: string, expected: number): Promise<void> {
    const { event, log } = await billedRows(rid);
    const list = Number(event.input_tokens) * LIST.input_token + Number(event.output_tokens) * LIST.output_token;
    expect((event.units as Record<string, number>).cost_micros, 'the difference to the list price').to.equal(expected - list);
    expect(Number(log.cost_micros), 'the request log').to.equal(expected);
  }

  /** A JSON answer `r` and a stream `s` billed their text tokens at `text`, their audio tokens at the audio price: each's rows, and the budget's settlement. */
  async function bothBilledAt(o: { org: { id: string }; keyId: string }, r: Awaited<ReturnType<typeof json>>, s: Awaited<ReturnType<typeof streamed>>, text: Price): Promise<void> {
    const streamedUsage = s.events.map((e) => e.data?.usage).filter(Boolean).pop() as Usage;
    let total = 0;
    for (const [rid, usage] of [[r.headers.get('x-service-request-id')!, r.body.usage as Usage], [s.headers.get('x-service-request-id')!, streamedUsage]] as const) {
      const expected = costOf(usage, text, AUDIO);
      await billedAt(rid, expected);
      total += expected;
    }
    await settledAt(o, total);
  }

  it('priority (dearer) and flex (cheaper): text tokens at the tier price, audio tokens at the audio price, JSON and streamed', async () => {
    for (const [service_tier, tier] of [['priority', PRIORITY], ['flex', FLEX]] as const) {
      const o = await budgeted();
      const r = await json(o.key, Object.assign({ model, messages: withAudio, service_tier }, OUTPUT));
      expect(r.status, r.text).to.equal(200);
      expect(r.body.service_tier).to.equal(service_tier);
      const s = await streamed(o.key, Object.assign({ model, messages: withAudio, service_tier }, OUTPUT));
      expect(s.status, s.text).to.equal(200);
      expect(sent(up).map((b) => b.service_tier)).to.deep.equal([service_tier, service_tier]);
      await bothBilledAt(o, r, s, tier);
      resetSim();
    }
  });

  it('an answer served on default for an asked priority: text at the list price, audio at the audio price', async () => {
    env().sim.knobs.set(up, { servedTier: 'default' });
    const o = await budgeted();
    const r = await json(o.key, Object.assign({ model, messages: withAudio, service_tier: 'priority' }, OUTPUT));
    expect(r.status, r.text).to.equal(200);
    expect(r.body.service_tier).to.equal('default');
    const expected = costOf(r.body.usage, LIST, AUDIO);
    await billedAt(r.headers.get('x-service-request-id')!, expected);
    await settledAt(o, expected);
  });

  it("a request without a tier that the project's tier serves on priority: text at the priority price, audio at the audio price, JSON and streamed", async () => {
    env().sim.knobs.set(up, { projectTier: 'priority' });
    const o = await budgeted();
    const r = await json(o.key, Object.assign({ model, messages: withAudio }, OUTPUT));
    expect(r.status, r.text).to.equal(200);
    expect(r.body.service_tier).to.equal('priority');
    const s = await streamed(o.key, Object.assign({ model, messages: withAudio }, OUTPUT));
    expect(s.status, s.text).to.equal(200);
    expect(sent(up).map((b) => b.service_tier)).to.deep.equal([undefined, undefined]);
    await bothBilledAt(o, r, s, PRIORITY);
  });

  it("a fallback with its own list, tier and audio prices: text at its tier's price, audio at its audio price", async () => {
    const down = `sim-down-${rndId()}`;
    env().sim.knobs.set(down, { status: 500 });
    const [asked, fallback, fallbackUp] = [`tier-audio-asked-${rndId()}`, `tier-audio-fb-${rndId()}`, `sim-tier-audio-fb-${rndId()}`];
    const FB = { list: { input_token: 2, output_token: 4 }, priority: { input_token: 7, output_token: 11 }, audio: { input_token: 20, output_token: 40 } };
    await upsertModel({ id: fallback, provider: 'simulator', upstream: fallbackUp, capabilities: { chat: true }, prices: { ...FB.list, ...audioPrices(FB.audio), service_tiers: { priority: FB.priority } } });
    await upsertModel({ id: asked, provider: 'simulator', upstream: down, capabilities: { chat: true }, prices: { ...LIST, ...audioPrices(AUDIO), service_tiers: { priority: PRIORITY } }, fallbacks: [fallback] });
    await bumpEpoch(env().redis);
    const o = await budgeted();
    const r = await json(o.key, Object.assign({ model: asked, messages: withAudio, service_tier: 'priority' }, OUTPUT));
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-service-fallback-model')).to.equal(fallback);
    expect(sent(fallbackUp).pop()).to.include({ service_tier: 'priority' });
    const expected = costOf(r.body.usage, FB.priority, FB.audio);
    await billedAt(r.headers.get('x-service-request-id')!, expected);
    await settledAt(o, expected);
  });
});
