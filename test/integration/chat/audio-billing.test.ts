import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { rndId } from '../../helpers/pool-models';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { billedRows, budgetedOrg as budgeted, chatJson as json, chatStreamed as streamed, sentTo as sent, settledAt, modelsPageRow, ownKeyModel, ownKeyHeaders } from '../../helpers/priced-chat';

const msgs = [{ role: 'user', content: 'hello there' }];
const withAudio = [{ role: 'user', content: [{ type: 'text', text: 'what is said?' }, { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZFZm10IBAAAAABAAEA', format: 'wav' } }] }];
const TEXT = { input_token: 1, output_token: 2 };
const AUDIO = { audio_input_token: 16, audio_output_token: 32 };
const OUTPUT = { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } };

/**
 * Audio on chat completions (docs/catalog.md "Audio tokens"): on the platform's credential a request
 * asking audio output (`audio`, `modalities`) or sending `input_audio` parts to a model without the
 * matching audio price is refused 400 before anything is sent or billed, JSON and streamed; with the
 * price, the answer's audio tokens (usage `prompt_tokens_details.audio_tokens`,
 * `completion_tokens_details.audio_tokens`, as the simulator reports them like OpenAI) are billed at it
 * (the difference in `units.cost_micros`: request log, ledger, budget), and a budget holds it; a request
 * without audio is unchanged; a caller's own key passes audio at cost 0.
 */
describe('chat: audio tokens priced per model on the platform credential', function () {
  this.timeout(30_000);
  let priced: string;
  let plain: string;
  let pricedUp: string;
  let plainUp: string;
  beforeEach(resetSim);
  before(async () => {
    [priced, plain, pricedUp, plainUp] = [`audio-${rndId()}`, `text-${rndId()}`, `sim-audio-${rndId()}`, `sim-text-${rndId()}`];
    await upsertModel({ id: priced, provider: 'simulator', upstream: pricedUp, capabilities: { chat: true }, prices: { ...TEXT, ...AUDIO } });
    await upsertModel({ id: plain, provider: 'simulator', upstream: plainUp, capabilities: { chat: true }, prices: TEXT });
    await bumpEpoch(env().redis);
  });

  const rowsOf = async (rid: string) => {
    const { event, log } = await billedRows(rid);
    return { event, log, text: Number(event.input_tokens) * TEXT.input_token + Number(event.output_tokens) * TEXT.output_token };
  };
  /** The audio tokens an answer's usage reports. */
  const audioOf = (usage: { prompt_tokens_details?: { audio_tokens?: number }; completion_tokens_details?: { audio_tokens?: number } }) => ({
    input: usage.prompt_tokens_details?.audio_tokens ?? 0,
    output: usage.completion_tokens_details?.audio_tokens ?? 0,
  });

  it('audio the model does not price is refused 400 naming the field, JSON and streamed: nothing sent, nothing billed', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ messages: msgs, audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
      [{ messages: msgs, modalities: ['text', 'audio'] }, 'modalities'],
      [{ messages: withAudio }, 'messages[0].content[1]'],
    ];
    for (const [body, param] of cases) {
      const o = await budgeted();
      const r = await json(o.key, Object.assign({ model: plain }, body));
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.include({ type: 'invalid_request_error', code: 'unsupported_parameter', param });
      const s = await streamed(o.key, Object.assign({ model: plain }, body));
      expect(s.status, s.text).to.equal(400);
      expect(sent(plainUp).length, 'nothing sent').to.equal(0);
      await usageSettled();
      expect(await ledgerSpend('key', o.keyId, null), 'nothing billed').to.equal(0);
    }
    // a model pricing audio input only still refuses audio output
    const inOnly = `audio-in-${rndId()}`;
    await upsertModel({ id: inOnly, provider: 'simulator', upstream: plainUp, capabilities: { chat: true }, prices: { ...TEXT, audio_input_token: 16 } });
    await bumpEpoch(env().redis);
    const o = await budgeted();
    const r = await json(o.key, Object.assign({ model: inOnly, messages: withAudio }, OUTPUT));
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.param).to.equal('audio');
    expect(sent(plainUp).length).to.equal(0);
  });

  it('with the price, audio output and input tokens are billed at the audio price: request log, ledger, budget (JSON and streamed)', async () => {
    const o = await budgeted();
    const r = await json(o.key, Object.assign({ model: priced, messages: withAudio }, OUTPUT));
    expect(r.status, r.text).to.equal(200);
    expect(sent(pricedUp).pop()).to.deep.include({ modalities: ['text', 'audio'], messages: withAudio });
    const s = await streamed(o.key, Object.assign({ model: priced, messages: withAudio }, OUTPUT));
    expect(s.status, s.text).to.equal(200);
    const streamedUsage = s.events.map((e) => e.data?.usage).filter(Boolean).pop();
    let total = 0;
    for (const [rid, usage] of [[r.headers.get('x-service-request-id')!, r.body.usage], [s.headers.get('x-service-request-id')!, streamedUsage]] as const) {
      const a = audioOf(usage);
      expect(a.input, 'audio input tokens reported').to.be.greaterThan(0);
      expect(a.output, 'audio output tokens reported').to.be.greaterThan(0);
      const { event, log, text } = await rowsOf(rid);
      const extra = a.input * (AUDIO.audio_input_token - TEXT.input_token) + a.output * (AUDIO.audio_output_token - TEXT.output_token);
      expect((event.units as Record<string, number>).cost_micros, 'the difference to the text price').to.equal(extra);
      expect(Number(log.cost_micros)).to.equal(text + extra);
      total += text + extra;
    }
    await settledAt(o, total);
  });

  it("a budget holds the audio price: one that fits the text price's worst case but not the audio price's is refused 402 before any call", async () => {
    const o = await buildOrg(env().redis);
    // worst case: ~20 input tokens + 50 output: ~120 micros at the text price, ~1,900 at the audio price
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 400, budgetPeriod: 'day' });
    const r = await json(o.key, Object.assign({ model: priced, messages: msgs, max_tokens: 50 }, OUTPUT));
    expect(r.status, r.text).to.equal(402);
    expect(r.body.error.code).to.equal('budget_exceeded');
    expect(sent(pricedUp).length, 'nothing sent').to.equal(0);
    expect(await ledgerSpend('key', o.keyId, null), 'nothing billed').to.equal(0);
    const ok = await json(o.key, { model: priced, messages: msgs, max_tokens: 50 });
    expect(ok.status, ok.text).to.equal(200);
  });

  it('without audio nothing changes: text price, no difference, on a model with or without audio prices', async () => {
    for (const [model, up] of [[priced, pricedUp], [plain, plainUp]]) {
      const o = await budgeted();
      const r = await json(o.key, { model, messages: msgs });
      expect(r.status, r.text).to.equal(200);
      expect(audioOf(r.body.usage)).to.deep.equal({ input: 0, output: 0 });
      expect(sent(up).length).to.equal(1);
      const { event, log, text } = await rowsOf(r.headers.get('x-service-request-id')!);
      expect(event.units ?? {}).not.to.have.property('cost_micros');
      expect(Number(log.cost_micros)).to.equal(text);
      await settledAt(o, text);
    }
  });

  it("a caller's own provider key (passthrough) sends audio as asked, priced or not, and costs nothing", async () => {
    const { provider: prov, model, upstream: up } = await ownKeyModel(TEXT);
    const o = await budgeted();
    const headers = ownKeyHeaders(o.key);
    const r = await call('POST', '/v1/chat/completions', { headers, json: Object.assign({ model, messages: withAudio }, OUTPUT) });
    expect(r.status, r.text).to.equal(200);
    expect(audioOf(r.body.usage).output).to.be.greaterThan(0);
    expect(sent(up).pop()).to.deep.include({ audio: OUTPUT.audio });
    const { event, log } = await rowsOf(r.headers.get('x-service-request-id')!);
    expect(event.passthrough).to.equal(true);
    expect(Number(log.cost_micros)).to.equal(0);
    await settledAt(o, 0);
  });

  it("the dashboard's models page shows a model's audio prices", async () => {
    const row = await modelsPageRow(priced);
    expect(row).to.include('$16.00 / 1M audio input tokens');
    expect(row).to.include('$32.00 / 1M audio output tokens');
  });
});
