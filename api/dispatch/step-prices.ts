import type { CatalogModel } from '../../shared/catalog/catalog';
import type { RouteStep } from '../../shared/queues/payloads';
import { priceDelta, pricesOf, type CostPrices } from '../../shared/limits/usage-cost';
import { audioPrices, type AudioAsked } from '../../shared/catalog/audio-prices';
import { merged } from '../../shared/merged';

/** What a chat request on the platform's credential is priced by, besides the model of the step that serves it. */
export interface Pricing {
  /** The model asked for: the ledger prices the usage event at its list prices, a step carries its differences to them. */
  asked: CatalogModel;
  /** The OpenAI service tier asked (flex, scale or priority, as shared/catalog/tier-prices.ts billedTier reads it). */
  tier?: string;
  /** The audio asked (shared/catalog/audio-prices.ts). */
  audio?: AudioAsked;
  /** Every price a step may bill the request at, the asked model's list prices first: a budget holds it at the dearest (route.ts, usage-cost.ts `dearest`). */
  held: CostPrices[];
}

/**
 * A chat step of model `m` with the prices the worker bills its answer at, each a difference the
 * usage event states in `units.cost_micros`: its list prices' (a fallback's), its priced tier's,
 * its audio prices'; and each price it may bill at added to `held`.
 */
export function pricedStep(step: RouteStep, m: CatalogModel, p: Pricing): RouteStep {
  let listed = step;
  if (m !== p.asked) {
    p.held.push(pricesOf(m.prices));
    const delta = priceDelta(m.prices, p.asked.prices);
    if (delta) listed = merged(step, { priceDelta: delta });
  }
  const tiered = p.tier ? withTierPrice(listed, m, p.asked, p.tier, p.held) : listed;
  return p.audio ? withAudioPrice(tiered, m, p.audio, p.held) : tiered;
}

/**
 * A step of a request asking an OpenAI service tier (`tier`). When the step's model `m` prices it,
 * the step carries that price's difference from the list price of the model asked for (`asked`) as
 * `tierPriceDelta` ({} when equal): the worker sends the tier and bills an answer served on it at
 * that price (workers/pools/service-tier.ts); `held` takes the tier's price. When it does not, the
 * step is returned as it is: the worker sends the request without `service_tier` (standard
 * processing, billed at the list price).
 */
function withTierPrice(step: RouteStep, m: CatalogModel, asked: CatalogModel, tier: string, held: CostPrices[]): RouteStep {
  const p = m.tierPrices?.[tier];
  if (!p) return step;
  held.push(p);
  return merged(step, { tierPriceDelta: priceDelta(p as Record<string, number>, asked.prices) ?? {} });
}

/**
 * A step of a request asking audio: it carries its model's audio price difference for the audio
 * asked (`audioPriceDelta`, workers/pools/audio-price.ts), and `held` takes its audio prices.
 */
function withAudioPrice(step: RouteStep, m: CatalogModel, asked: AudioAsked, held: CostPrices[]): RouteStep {
  const p = audioPrices(m, asked);
  held.push(p.held);
  return merged(step, { audioPriceDelta: p.delta });
}
