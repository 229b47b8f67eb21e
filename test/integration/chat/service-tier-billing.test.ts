import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call } from '../../helpers/http';
import { rndId } from '../../helpers/pool-models';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { billedNothing, billedRows, budgetedOrg as budgeted, chatJson as json, chatStreamed as streamed, modelsPageRow, sentTo as sent, settledAt, TIER_PRICES, tieredModels, ownKeyModel, ownKeyHeaders } from '../../helpers/priced-chat';

const msgs = [{ role: 'user', content: 'hello there' }];
const { LIST, PRIORITY, FLEX } = TIER_PRICES;

/**
 * OpenAI's `service_tier` on the platform's credential (docs/catalog.md "Service tiers"): a tier the
 * model does not price (`prices.service_tiers`) is not sent upstream and the request is billed at the
 * list price; a priced tier is sent, and an answer the upstream reports served on it is billed at the
 * tier's price (the difference in `units.cost_micros`: request log, ledger, budget settlement), JSON
 * and streamed; an answer reporting `default` is billed at the list price; a budget holds the tier's
 * price; a caller's own key passes any tier and costs nothing. A request without a tier (or `auto`)
 * is served on the project's tier: an answer reporting a tier the model prices is billed at it, and a
 * budget holds the dearest priced tier. The simulator answers the tier asked, as OpenAI does (`fast`
 * as `priority`), or its `servedTier` knob; a request without one, its `projectTier` knob.
 */
describe('chat: service_tier priced per model on the platform credential', function () {
  this.timeout(30_000);
  let tiered: string;
  let plain: string;
  let tieredUp: string;
  let plainUp: string;
  const models = tieredModels();
  before(() => ({ tiered, plain, tieredUp, plainUp } = models));

  const rowsOf = async (rid: string) => {
    const { event, log } = await billedRows(rid);
    return { event, log, at: (p: { input_token: number; output_token: number }) => Number(event.input_tokens) * p.input_token + Number(event.output_tokens) * p.output_token };
  };

  /** Each answer billed at `price`: the usage event's difference to the list price (none at it), the request log, and the budget's settlement of them all. */
  const billedAt = async (o: { org: { id: string }; keyId: string }, answers: Array<{ headers: { get(name: string): string | null } }>, price: typeof LIST) => {
    let total = 0;
    for (const a of answers) {
      const { event, log, at } = await rowsOf(a.headers.get('x-service-request-id')!);
      if (price === LIST) expect(event.units ?? {}, 'no price difference').not.to.have.property('cost_micros');
      else expect((event.units as Record<string, number>).cost_micros, 'the difference to the list price').to.equal(at(price) - at(LIST));
      expect(Number(log.cost_micros)).to.equal(at(price));
      total += at(price);
    }
    await settledAt(o, total);
  };

  it('a tier the model does not price (priority, flex, scale, fast) is not sent upstream, answered as served (default) and billed at the list price, JSON and streamed', async () => {
    for (const service_tier of ['priority', 'flex', 'scale', 'fast']) {
      const o = await budgeted();
      const r = await json(o.key, { model: plain, messages: msgs, service_tier });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.service_tier, service_tier).to.equal('default');
      const s = await streamed(o.key, { model: plain, messages: msgs, service_tier });
      expect(s.status, s.text).to.equal(200);
      expect(s.events.slice(0, -1).every((e) => e.data.service_tier === 'default'), s.text).to.equal(true);
      const bodies = sent(plainUp);
      expect(bodies.length).to.equal(2);
      for (const b of bodies) expect(b, service_tier).not.to.have.property('service_tier');
      await billedAt(o, [r, s], LIST);
      resetSim();
    }
  });

  it('auto and default are sent as asked and billed at the list price, priced tiers or not', async () => {
    for (const model of [plain, tiered]) {
      for (const service_tier of ['auto', 'default']) {
        const o = await budgeted();
        const r = await json(o.key, { model, messages: msgs, service_tier });
        expect(r.status, r.text).to.equal(200);
        expect(r.body.service_tier).to.equal('default');
        expect(sent(model === plain ? plainUp : tieredUp).pop()).to.include({ service_tier });
        const { log, at } = await rowsOf(r.headers.get('x-service-request-id')!);
        expect(Number(log.cost_micros)).to.equal(at(LIST));
        await settledAt(o, at(LIST));
      }
    }
  });

  it('a priced priority is sent, and the answer served on it is billed at its price: request log, ledger, budget (JSON, and fast answered priority)', async () => {
    for (const service_tier of ['priority', 'fast']) {
      const o = await budgeted();
      const r = await json(o.key, { model: tiered, messages: msgs, service_tier });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.service_tier).to.equal('priority');
      expect(sent(tieredUp).pop()).to.include({ service_tier });
      const { event, log, at } = await rowsOf(r.headers.get('x-service-request-id')!);
      expect(at(PRIORITY)).to.be.greaterThan(at(LIST));
      expect((event.units as Record<string, number>).cost_micros, 'the difference to the list price').to.equal(at(PRIORITY) - at(LIST));
      expect(Number(log.cost_micros)).to.equal(at(PRIORITY));
      await settledAt(o, at(PRIORITY));
    }
  });

  it('streamed: the tier the chunks report prices the usage (priority dearer, flex cheaper)', async () => {
    for (const [service_tier, price] of [['priority', PRIORITY], ['flex', FLEX]] as const) {
      const o = await budgeted();
      const s = await streamed(o.key, { model: tiered, messages: msgs, service_tier });
      expect(s.status, s.text).to.equal(200);
      expect(s.events.slice(0, -1).every((e) => e.data.service_tier === service_tier), s.text).to.equal(true);
      expect(sent(tieredUp).pop()).to.include({ service_tier });
      const { log, at } = await rowsOf(s.headers.get('x-service-request-id')!);
      expect(at(price)).to.not.equal(at(LIST));
      expect(Number(log.cost_micros)).to.equal(at(price));
      await settledAt(o, at(price));
    }
  });

  it('an answer reporting default for an asked priced priority is billed at the list price, JSON and streamed', async () => {
    env().sim.knobs.set(tieredUp, { servedTier: 'default' });
    const o = await budgeted();
    const r = await json(o.key, { model: tiered, messages: msgs, service_tier: 'priority' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.service_tier).to.equal('default');
    const s = await streamed(o.key, { model: tiered, messages: msgs, service_tier: 'priority' });
    expect(s.status, s.text).to.equal(200);
    expect(sent(tieredUp).map((b) => b.service_tier)).to.deep.equal(['priority', 'priority']);
    await billedAt(o, [r, s], LIST);
  });

  it("a budget holds a priced tier's price: one that fits the list price's worst case but not priority's is refused 402 before any call, nothing billed", async () => {
    const o = await buildOrg(env().redis);
    // worst case: ~10 input tokens + 50 output: ~110 micros at the list price, ~280 at priority
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 200, budgetPeriod: 'day' });
    const r = await json(o.key, { model: tiered, messages: msgs, max_tokens: 50, service_tier: 'priority' });
    expect(r.status, r.text).to.equal(402);
    expect(r.body.error.code).to.equal('budget_exceeded');
    expect(sent(tieredUp).length, 'nothing sent').to.equal(0);
    expect(await ledgerSpend('key', o.keyId, null), 'nothing billed').to.equal(0);
    // without a tier (or `auto`) the project's tier may serve it, priority too: held at the dearest priced tier
    for (const service_tier of [undefined, 'auto']) {
      const none = await json(o.key, { model: tiered, messages: msgs, max_tokens: 50, service_tier });
      expect(none.status, none.text).to.equal(402);
    }
    expect(sent(tieredUp).length, 'nothing sent').to.equal(0);
    // the same request pinned to standard processing (`default`) is held at the list price, and fits
    const ok = await json(o.key, { model: tiered, messages: msgs, max_tokens: 50, service_tier: 'default' });
    expect(ok.status, ok.text).to.equal(200);
  });

  it("a request without a tier that the project's tier serves on a priced priority is billed at its price: usage event, request log, budget (JSON and streamed)", async () => {
    env().sim.knobs.set(tieredUp, { projectTier: 'priority' });
    const o = await budgeted();
    const r = await json(o.key, { model: tiered, messages: msgs });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.service_tier, 'as the upstream reports it').to.equal('priority');
    const s = await streamed(o.key, { model: tiered, messages: msgs });
    expect(s.status, s.text).to.equal(200);
    expect(s.events.slice(0, -1).every((e) => e.data.service_tier === 'priority'), s.text).to.equal(true);
    for (const b of sent(tieredUp)) expect(b, 'none sent').not.to.have.property('service_tier');
    await billedAt(o, [r, s], PRIORITY);
  });

  it('`auto` served on a priced flex is billed at its price; a tier the model does not price (scale) at the list price', async () => {
    for (const [projectTier, price] of [['flex', FLEX], ['scale', LIST]] as const) {
      env().sim.knobs.set(tieredUp, { projectTier });
      const o = await budgeted();
      const s = await streamed(o.key, { model: tiered, messages: msgs, service_tier: 'auto' });
      expect(s.status, s.text).to.equal(200);
      const { log, at } = await rowsOf(s.headers.get('x-service-request-id')!);
      expect(Number(log.cost_micros), projectTier).to.equal(at(price));
      await settledAt(o, at(price));
    }
  });

  it('a model without tier prices served on priority unasked is billed at the list price, JSON and streamed', async () => {
    env().sim.knobs.set(plainUp, { projectTier: 'priority' });
    const o = await budgeted();
    const r = await json(o.key, { model: plain, messages: msgs });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.service_tier).to.equal('priority');
    const s = await streamed(o.key, { model: plain, messages: msgs });
    expect(s.status, s.text).to.equal(200);
    await billedAt(o, [r, s], LIST);
  });

  it("a fallback sends the tier only when its own model prices it, and is billed at that model's tier price", async () => {
    const down = `sim-down-${rndId()}`;
    env().sim.knobs.set(down, { status: 500 });
    const [toPlain, toTiered] = [`fb-plain-${rndId()}`, `fb-tiered-${rndId()}`];
    await upsertModel({ id: toPlain, provider: 'simulator', upstream: down, capabilities: { chat: true }, prices: { ...LIST, service_tiers: { priority: PRIORITY } }, fallbacks: [plain] });
    await upsertModel({ id: toTiered, provider: 'simulator', upstream: down, capabilities: { chat: true }, prices: LIST, fallbacks: [tiered] });
    await bumpEpoch(env().redis);
    for (const [model, fallback, up, price] of [[toPlain, plain, plainUp, LIST], [toTiered, tiered, tieredUp, PRIORITY]] as const) {
      const o = await budgeted();
      const r = await json(o.key, { model, messages: msgs, service_tier: 'priority' });
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-fallback-model')).to.equal(fallback);
      expect(sent(down).pop()?.service_tier, 'the primary, which failed').to.equal(model === toPlain ? 'priority' : undefined);
      const b = sent(up).pop()!;
      if (price === LIST) expect(b, 'an unpriced fallback').not.to.have.property('service_tier');
      else expect(b).to.include({ service_tier: 'priority' });
      const { log, at } = await rowsOf(r.headers.get('x-service-request-id')!);
      expect(Number(log.cost_micros)).to.equal(at(price));
      await settledAt(o, at(price));
    }
  });

  it('without service_tier nothing changes: none sent, none answered, list price', async () => {
    const o = await budgeted();
    const r = await json(o.key, { model: tiered, messages: msgs });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).not.to.have.property('service_tier');
    expect(sent(tieredUp).pop()).not.to.have.property('service_tier');
    const { event, log, at } = await rowsOf(r.headers.get('x-service-request-id')!);
    expect(event.units ?? {}).not.to.have.property('cost_micros');
    expect(Number(log.cost_micros)).to.equal(at(LIST));
  });

  it("a caller's own provider key (passthrough) sends any tier as asked, priced or not, and costs nothing", async () => {
    const { provider: prov, model, upstream: up } = await ownKeyModel(LIST);
    const o = await budgeted();
    const headers = ownKeyHeaders(o.key);
    const r = await call('POST', '/v1/chat/completions', { headers, json: { model, messages: msgs, service_tier: 'priority' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.service_tier).to.equal('priority');
    const [b] = sent(up);
    expect(b).to.include({ service_tier: 'priority' });
    expect(env().sim.log.entries.find((e) => e.model === up)!.authorization).to.equal('Bearer sk-callers-own-key');
    // and one without a tier that its project serves on priority, on a model pricing tiers: the caller's account pays
    const ownTiered = `own-tiered-${rndId()}`;
    await upsertModel({ id: ownTiered, provider: prov, upstream: up, capabilities: { chat: true }, prices: { ...LIST, service_tiers: { priority: PRIORITY } } });
    await bumpEpoch(env().redis);
    env().sim.knobs.set(up, { projectTier: 'priority' });
    const unasked = await call('POST', '/v1/chat/completions', { headers, json: { model: ownTiered, messages: msgs } });
    expect(unasked.status, unasked.text).to.equal(200);
    expect(unasked.body.service_tier).to.equal('priority');
    for (const rid of [r.headers.get('x-service-request-id')!, unasked.headers.get('x-service-request-id')!]) {
      await billedNothing(rid);
    }
    await settledAt(o, 0);
  });

  it("the dashboard's models page shows a model's tier prices", async () => {
    const row = await modelsPageRow(tiered);
    expect(row).to.include('service_tier priority: $3.00 / 1M input tokens, $5.00 / 1M output tokens');
    expect(row).to.include('service_tier flex: $0.50 / 1M input tokens, $1.00 / 1M output tokens');
  });
});
