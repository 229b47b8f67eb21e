import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { completion, chunk, usageChunk, ScriptedUpstream } from '../../helpers/scripted-upstream';
import { usageSettled } from '../../helpers/usage';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { budgetStatus } from '../../../shared/limits/limits';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { orgUsageFigures } from '../../../shared/billing/usage-figures';
import { db } from '../../../shared/db/sequelize';

/**
 * A request for model A whose pool fails is served by its fallback B, at other prices: the caller is
 * billed for B, the model that answered (as LiteLLM, Portkey and OpenRouter bill), in every reader of
 * the ledger (the usage event's cost, the request log row, the org's usage figures) and in the
 * settlement of the budget's reservation; the event keeps A as its `model` and names B in
 * `deployment` (docs/routing.md "Billing").
 */
describe('model pools: a fallback is billed at the prices of the model that served', () => {
  let broken: ScriptedUpstream;
  let fallback: ScriptedUpstream;
  let asked: string;
  let dear: string;
  let cheap: string;
  const USAGE = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };
  const A = { input_token: 1, output_token: 2 };
  const DEAR = { input_token: 5, output_token: 7 };
  const CHEAP = { input_token: 0, output_token: 1 };
  const cost = (p: { input_token: number; output_token: number }) => USAGE.prompt_tokens * p.input_token + USAGE.completion_tokens * p.output_token;

  before(async () => {
    broken = await ScriptedUpstream.start();
    broken.otherwise = () => ({ kind: 'json', status: 500, body: { error: { message: 'down' } } });
    fallback = await ScriptedUpstream.start();
    fallback.otherwise = (r) => r.body.stream
      ? { kind: 'sse', events: [chunk({ role: 'assistant', content: 'from the fallback' }), chunk({}, 'stop'), usageChunk(USAGE)] }
      : { kind: 'json', body: completion({ role: 'assistant', content: 'from the fallback' }, 'stop', USAGE) };
    dear = await fallback.model({ prices: DEAR });
    cheap = await fallback.model({ prices: CHEAP });
    asked = await broken.model({ prices: A });
  });
  after(async () => {
    await broken.close();
    await fallback.close();
  });

  const fallsBackTo = async (to: string) => {
    await upsertModel({ id: asked, provider: asked, upstream: 'up-model', capabilities: { chat: true, vision: true, tools: true, json_schema: true }, prices: A, fallbacks: [to] } as never);
    await bumpEpoch(env().redis);
  };
  const eventOf = async (rid: string) => {
    await usageSettled();
    const q = (sql: string) => db().query<Record<string, unknown>>(sql, { type: QueryTypes.SELECT, replacements: { rid } });
    const [event] = await q('SELECT model, deployment, input_tokens, output_tokens, units FROM usage_events WHERE request_id = :rid');
    const [log] = await q('SELECT model, deployment, cost_micros FROM request_logs WHERE request_id = :rid');
    return { event, log };
  };

  for (const [name, to, prices] of [['dearer', () => dear, DEAR], ['cheaper', () => cheap, CHEAP]] as const) {
    it(`a ${name} fallback: the usage event, the request log, the org's figures and the key's budget all cost the fallback's price`, async () => {
      await fallsBackTo(to());
      const o = await buildOrg(env().redis);
      const budget = { micros: 1_000_000, period: 'day' as const };
      await updateKeyControls(env().redis, o.keyId, { budgetMicros: budget.micros, budgetPeriod: budget.period });
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: asked, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-fallback-model')).to.equal(to());
      expect(r.body.model, 'the body names the model asked for (docs/routing.md)').to.equal(asked);
      const { event, log } = await eventOf(r.headers.get('x-service-request-id')!);
      // both models recorded: the one asked for as `model`, the one that served in `deployment`
      expect(event).to.deep.include({ model: asked, deployment: `${to()}/${to()}`, input_tokens: 10, output_tokens: 20 });
      expect(log).to.deep.include({ model: asked, deployment: `${to()}/${to()}` });
      const served = cost(prices);
      expect(served, 'the two prices differ').to.not.equal(cost(A));
      expect(Number(log.cost_micros), 'request log cost').to.equal(served);
      expect(await ledgerSpend('key', o.keyId, null), 'the ledger').to.equal(served);
      expect((await orgUsageFigures(o.org.id, 1)).totals.cost_micros, "the org's spend").to.equal(served);
      const st = await budgetStatus(env().redis, o.org.id, 'key', o.keyId, budget);
      expect(st.spent_usd * 1e6, 'the reservation settled at the served price').to.be.closeTo(served, 1e-6);
      expect(st.reserved_usd, 'nothing left reserved').to.equal(0);
    });
  }

  it('streamed: the same price', async () => {
    await fallsBackTo(dear);
    const o = await buildOrg(env().redis);
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), { model: asked, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    expect(s.status).to.equal(200);
    expect(s.headers.get('x-service-fallback-model')).to.equal(dear);
    const { log } = await eventOf(s.headers.get('x-service-request-id')!);
    expect(Number(log.cost_micros)).to.equal(cost(DEAR));
    expect(await ledgerSpend('key', o.keyId, null)).to.equal(cost(DEAR));
  });

  it("a budget holds the request at the dearest model that may serve it: one that fits the asked model's worst case but not the fallback's is refused before any call", async () => {
    await fallsBackTo(dear);
    const o = await buildOrg(env().redis);
    // worst case at A: ~10 input + 50 x 2 = ~110 micros; at the fallback: ~50 + 50 x 7 = ~400
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 250, budgetPeriod: 'day' });
    broken.reset();
    fallback.reset();
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: asked, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status, r.text).to.equal(402);
    expect(r.body.error.code).to.equal('budget_exceeded');
    expect(broken.received.length + fallback.received.length, 'no upstream called').to.equal(0);
  });
});
