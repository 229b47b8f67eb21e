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
import { billedNothing, billedRows, budgetedOrg as budgeted, chatJson as json, chatStreamed as streamed, sentTo as sent, settledAt, modelsPageRow, ownKeyModel, ownKeyHeaders } from '../../helpers/priced-chat';

const msgs = [{ role: 'user', content: 'what is new today?' }];
const TEXT = { input_token: 1, output_token: 2 };
/** $25 per 1,000 calls: micro-dollars per web search call. */
const CALL = 25_000;

/**
 * OpenAI's Chat Completions web search models (docs/catalog.md "OpenAI's web search models"): a model
 * priced per web search call (`prices.web_search_call`) bills, on the platform's credential, one call
 * at that price on every answer a step of it serves, besides the tokens (the fee in
 * `units.cost_micros`: request log, ledger, budget), JSON and streamed; a budget holds it; a failed or
 * refused request bills nothing; a fallback without the price bills none; a caller's own key costs 0.
 */
describe('chat: a web search call billed per request on a model priced per call', function () {
  this.timeout(30_000);
  let searchy: string;
  let plain: string;
  let searchyUp: string;
  let plainUp: string;
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());
  before(async () => {
    [searchy, plain, searchyUp, plainUp] = [`search-${rndId()}`, `nosearch-${rndId()}`, `sim-search-${rndId()}`, `sim-nosearch-${rndId()}`];
    await upsertModel({ id: searchy, provider: 'simulator', upstream: searchyUp, capabilities: { chat: true }, prices: { ...TEXT, web_search_call: CALL } });
    await upsertModel({ id: plain, provider: 'simulator', upstream: plainUp, capabilities: { chat: true }, prices: TEXT });
    await bumpEpoch(env().redis);
  });

  const rowsOf = async (rid: string) => {
    const { event, log } = await billedRows(rid);
    return { event, log, text: Number(event.input_tokens) * TEXT.input_token + Number(event.output_tokens) * TEXT.output_token };
  };
  const rid = (r: { headers: { get(n: string): string | null } }) => r.headers.get('x-service-request-id')!;

  it('the tokens and one web search call are billed: usage event, request log, ledger, budget (JSON and streamed)', async () => {
    const o = await budgeted();
    const r = await json(o.key, { model: searchy, messages: msgs });
    expect(r.status, r.text).to.equal(200);
    const s = await streamed(o.key, { model: searchy, messages: msgs });
    expect(s.status, s.text).to.equal(200);
    expect(sent(searchyUp).length).to.equal(2);
    let total = 0;
    for (const id of [rid(r), rid(s)]) {
      const { event, log, text } = await rowsOf(id);
      expect(text, 'tokens billed').to.be.greaterThan(0);
      expect((event.units as Record<string, number>).cost_micros, 'one call').to.equal(CALL);
      expect(Number(log.cost_micros)).to.equal(text + CALL);
      total += text + CALL;
    }
    await settledAt(o, total);
  });

  it('a model without the price bills the tokens alone', async () => {
    const o = await budgeted();
    const r = await json(o.key, { model: plain, messages: msgs });
    expect(r.status, r.text).to.equal(200);
    const { event, log, text } = await rowsOf(rid(r));
    expect(event.units ?? {}).not.to.have.property('cost_micros');
    expect(Number(log.cost_micros)).to.equal(text);
    await settledAt(o, text);
  });

  it('a failed or refused request bills nothing, JSON and streamed', async () => {
    for (const status of [500, 400]) {
      env().sim.knobs.set(searchyUp, { status });
      const o = await budgeted();
      const r = await json(o.key, { model: searchy, messages: msgs });
      expect(r.status, r.text).to.be.at.least(400);
      const s = await streamed(o.key, { model: searchy, messages: msgs });
      expect(s.status, s.text).to.be.at.least(400);
      await usageSettled();
      await settledAt(o, 0);
    }
  });

  it('the served step\'s model decides: a fallback without the price bills none, a priced fallback bills its call', async () => {
    const down = `sim-down-${rndId()}`;
    env().sim.knobs.set(down, { status: 500 });
    const [toPlain, toSearchy] = [`fb-plain-${rndId()}`, `fb-search-${rndId()}`];
    await upsertModel({ id: toPlain, provider: 'simulator', upstream: down, capabilities: { chat: true }, prices: { ...TEXT, web_search_call: CALL }, fallbacks: [plain] });
    await upsertModel({ id: toSearchy, provider: 'simulator', upstream: down, capabilities: { chat: true }, prices: TEXT, fallbacks: [searchy] });
    await bumpEpoch(env().redis);
    for (const [model, fallback, fee] of [[toPlain, plain, 0], [toSearchy, searchy, CALL]] as const) {
      const o = await budgeted();
      const r = await json(o.key, { model, messages: msgs });
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-fallback-model')).to.equal(fallback);
      const { event, log, text } = await rowsOf(rid(r));
      if (fee) expect((event.units as Record<string, number>).cost_micros).to.equal(fee);
      else expect(event.units ?? {}).not.to.have.property('cost_micros');
      expect(Number(log.cost_micros)).to.equal(text + fee);
      await settledAt(o, text + fee);
    }
  });

  it('a budget holds the call: one the tokens fit but not the tokens and the call is refused 402 before any call', async () => {
    const o = await buildOrg(env().redis);
    // worst case: ~25 input tokens + 50 output: ~125 micros in tokens, 25,125 with the call
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 5_000, budgetPeriod: 'day' });
    const r = await json(o.key, { model: searchy, messages: msgs, max_tokens: 50 });
    expect(r.status, r.text).to.equal(402);
    expect(r.body.error.code).to.equal('budget_exceeded');
    const s = await streamed(o.key, { model: searchy, messages: msgs, max_tokens: 50 });
    expect(s.status, s.text).to.equal(402);
    expect(sent(searchyUp).length, 'nothing sent').to.equal(0);
    expect(await ledgerSpend('key', o.keyId, null), 'nothing billed').to.equal(0);
    const ok = await json(o.key, { model: plain, messages: msgs, max_tokens: 50 });
    expect(ok.status, ok.text).to.equal(200);
  });

  it("a caller's own provider key (passthrough) costs nothing on a model priced per call", async () => {
    const { provider: prov, model, upstream: up } = await ownKeyModel({ ...TEXT, web_search_call: CALL });
    const o = await budgeted();
    const headers = ownKeyHeaders(o.key);
    const r = await call('POST', '/v1/chat/completions', { headers, json: { model, messages: msgs } });
    expect(r.status, r.text).to.equal(200);
    await billedNothing(rid(r));
    await settledAt(o, 0);
  });

  it("the dashboard's models page shows the price per web search call", async () => {
    expect(await modelsPageRow(searchy)).to.include('$0.025 / web search call');
  });
});
