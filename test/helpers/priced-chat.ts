import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from './harness';
import { buildOrg } from './factories';
import { call, keyHeader } from './http';
import { postSse } from './sse-events';
import { usageSettled } from './usage';
import { updateKeyControls } from '../../shared/tenancy/ops';
import { budgetStatus } from '../../shared/limits/limits';
import { ledgerSpend } from '../../shared/limits/ledger-spend';
import { db } from '../../shared/db/sequelize';
import { rndId } from './pool-models';
import { upsertModel, upsertProvider } from '../../shared/catalog/catalog-ops';
import type { StoredPrices } from '../../shared/catalog/tier-prices';
import { bumpEpoch } from '../../shared/cache/epoch';
import { buildWebMember, dashboardAs } from './web-client';

/**
 * Chat requests billed at a price other than the model's list price (service tiers, audio tokens:
 * docs/catalog.md): the calls, what the simulator was sent, the request's usage event and request-log
 * row, and a key with a budget whose ledger and settlement a test checks.
 */

/** What the simulator received for an upstream model name. */
export const sentTo = (upstream: string) => env().sim.log.entries.filter((e) => e.model === upstream).map((e) => e.body as Record<string, unknown>);

/** The request's usage event and request-log row, once the outbox is drained. */
export async function billedRows(rid: string): Promise<{ event: Record<string, unknown>; log: Record<string, unknown> }> {
  await usageSettled();
  const q = (sql: string) => db().query<Record<string, unknown>>(sql, { type: QueryTypes.SELECT, replacements: { rid } });
  const [event] = await q('SELECT input_tokens, output_tokens, units, passthrough FROM usage_events WHERE request_id = :rid');
  const [log] = await q('SELECT cost_micros FROM request_logs WHERE request_id = :rid');
  return { event, log };
}

/** An org whose key has a daily budget of one dollar. */
export async function budgetedOrg() {
  const o = await buildOrg(env().redis);
  await updateKeyControls(env().redis, o.keyId, { budgetMicros: 1_000_000, budgetPeriod: 'day' });
  return o;
}

/** The key's ledger spend and settled budget are `micros`, nothing left reserved. */
export async function settledAt(o: { org: { id: string }; keyId: string }, micros: number): Promise<void> {
  expect(await ledgerSpend('key', o.keyId, null), 'the ledger').to.equal(micros);
  const st = await budgetStatus(env().redis, o.org.id, 'key', o.keyId, { micros: 1_000_000, period: 'day' });
  expect(st.spent_usd * 1e6, 'the budget settled').to.be.closeTo(micros, 1e-6);
  expect(st.reserved_usd, 'nothing left reserved').to.equal(0);
}

/** The provider key a caller sends of its own, which a passthrough provider forwards (docs/api.md, Passthrough). */
export const OWN_KEY_AUTH = 'Bearer sk-callers-own-key';

/** A key's headers with the caller's own provider key beside it. */
export const ownKeyHeaders = (key: string) => Object.assign(keyHeader(key), { authorization: OWN_KEY_AUTH });

/** A chat model at `prices` on a provider of its own that forwards a caller's own key (passthrough), with its upstream name. */
export async function ownKeyModel(prices: StoredPrices): Promise<{ provider: string; model: string; upstream: string }> {
  const [provider, model, upstream] = [`own-key-${rndId()}`, `own-${rndId()}`, `sim-own-${rndId()}`];
  await upsertProvider({ name: provider, kind: 'openai', base_url: `${env().simUrl}/v1`, api_key: 'platform-key', passthrough: true } as never);
  await upsertModel({ id: model, provider, upstream, capabilities: { chat: true }, prices });
  await bumpEpoch(env().redis);
  return { provider, model, upstream };
}

export const chatJson = (key: string, body: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: body });
export const chatStreamed = (key: string, body: Record<string, unknown>) =>
  postSse('/v1/chat/completions', keyHeader(key), Object.assign({ stream: true, stream_options: { include_usage: true } }, body));

/** A simulator model's list prices, and its priced tiers' (micro-dollars per token). */
export const TIER_PRICES = { LIST: { input_token: 1, output_token: 2 }, PRIORITY: { input_token: 3, output_token: 5 }, FLEX: { input_token: 0.5, output_token: 1 } };

/** Two simulator chat models: `tiered` pricing priority and flex, `plain` at the list price only; each with its upstream name. */
export interface TieredModels {
  tiered: string;
  plain: string;
  tieredUp: string;
  plainUp: string;
}

/**
 * Registers the suite's hooks (a fresh simulator and knobs per test; the two models made once) for a
 * suite billing service tiers (docs/catalog.md "Service tiers"); the fields are set once `before` ran.
 */
export function tieredModels(): TieredModels {
  const m = {} as TieredModels;
  const { LIST, PRIORITY, FLEX } = TIER_PRICES;
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());
  before(async () => {
    [m.tiered, m.plain, m.tieredUp, m.plainUp] = [`tiered-${rndId()}`, `plain-${rndId()}`, `sim-tiered-${rndId()}`, `sim-plain-${rndId()}`];
    await upsertModel({ id: m.tiered, provider: 'simulator', upstream: m.tieredUp, capabilities: { chat: true }, prices: { ...LIST, service_tiers: { priority: PRIORITY, flex: FLEX } } });
    await upsertModel({ id: m.plain, provider: 'simulator', upstream: m.plainUp, capabilities: { chat: true }, prices: LIST });
    await bumpEpoch(env().redis);
  });
  return m;
}

/** The dashboard's models page row of `model` (its price lines among it), as a member of a new org sees it. */
export async function modelsPageRow(model: string): Promise<string> {
  const o = await buildOrg(env().redis);
  const web = await dashboardAs(await buildWebMember(o.org.id, 'member'));
  const page = await web.get(`/dashboard/o/${o.org.slug}/models`);
  return page.text.split(`data-model="${model}"`)[1]?.split('</tr>')[0] ?? '';
}

/** The request was a caller's own key's (passthrough): its usage event states no price difference and its request log costs nothing. */
export async function billedNothing(rid: string): Promise<void> {
  const { event, log } = await billedRows(rid);
  expect(event.passthrough).to.equal(true);
  expect(event.units ?? {}).not.to.have.property('cost_micros');
  expect(Number(log.cost_micros)).to.equal(0);
}
