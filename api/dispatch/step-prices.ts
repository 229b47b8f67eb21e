import type { CatalogModel } from '../../shared/catalog/catalog';
import type { RouteStep } from '../../shared/queues/payloads';
import { priceDelta, pricesOf, type CostPrices } from '../../shared/limits/usage-cost';
import { audioPrices, type AudioAsked } from '../../shared/catalog/audio-prices';
import { merged } from '../../shared/merged';

/** What a chat request on the platform's credential is priced by, besides the model of the step that serves it. */
export interface Pricing {
  /** The model asked for: the ledger prices the usage event at its list prices, a step carries its differences to them. */
  asked: CatalogModel;
  /**
   * A chat request on the platform's credential: a step of a model pricing OpenAI service tiers bills an
   * answer at the tier it reports served on (withTierPrices). False for a caller's own key and other operations.
   */
  tiers: boolean;
  /** The tier the request pins (shared/catalog/tier-prices.ts pinnedTier: flex, scale, priority, or default); undefined for none or `auto`. */
  tier?: string;
  /** The audio asked (shared/catalog/audio-prices.ts). */
  audio?: AudioAsked;
  /** Every price a step may bill the request at, the asked model's list prices first: a budget holds it at the dearest (route.ts, usage-cost.ts `dearest`). */
  held: CostPrices[];
  /** On the platform's credential: a step of a model priced per web search call bills one call (withSearchCallPrice). False for a caller's own key. */
  searchCalls: boolean;
  /** The dearest web search call a step may bill (micro-dollars), 0 when none does: a budget holds it besides the tokens. */
  heldCallMicros: number;
}

/**
 * A chat step of model `m` with the prices the worker bills its answer at, each a difference the
 * usage event states in `units.cost_micros`: its list prices' (a fallback's), its priced tier's,
 * its audio prices', its web search call's; and each price it may bill at added to `held`.
 */
export function pricedStep(step: RouteStep, m: CatalogModel, p: Pricing): RouteStep {
  let listed = step;
  if (m !== p.asked) {
    p.held.push(pricesOf(m.prices));
    const delta = priceDelta(m.prices, p.asked.prices);
    if (delta) listed = merged(step, { priceDelta: delta });
  }
  // a model without tier prices: nothing more (no object)
  const tiered = p.tiers && m.tierPrices ? withTierPrices(listed, m.tierPrices, p) : listed;
  const audio = p.audio ? withAudioPrice(tiered, m, p.audio, p.held) : tiered;
  // a model without a web search call price: nothing more (no object)
  const call = p.searchCalls ? m.prices.web_search_call : undefined;
  return call ? withSearchCallPrice(audio, call, p) : audio;
}

/**
 * A step on the platform's credential whose model has a price per web search call
 * (`prices.web_search_call`): an answer it serves is billed one call at its price
 * (`webSearchCallMicros`, in the usage event's `units.cost_micros`: workers/pools/chat.worker.ts), a
 * floor, since OpenAI bills its Chat Completions search models per search call and its answer
 * reports no count of them (docs/catalog.md "OpenAI's web search models"); the budget holds the
 * dearest such call of the route (`heldCallMicros`).
 */
function withSearchCallPrice(step: RouteStep, micros: number, p: Pricing): RouteStep {
  p.heldCallMicros = Math.max(p.heldCallMicros, micros);
  return merged(step, { webSearchCallMicros: micros });
}

/**
 * A step on the platform's credential whose model prices OpenAI service tiers (`tiers`, its
 * `prices.service_tiers`): it carries each priced tier's difference from the list price of the model
 * asked for as `tierPriceDeltas` ({} when equal). The worker sends a tier asked only when it is among
 * them (workers/pools/service-tier.ts withTierSent) and bills an answer at the tier the upstream
 * reports it served on, when priced, whether asked or not: a request without `service_tier` (or
 * `auto`) is served on the tier the operator's OpenAI project is configured with (OpenAI's API
 * document, ServiceTier), and the platform's account pays that tier's rate.
 *
 * The budget holds (`held`) an upper bound of what the step may bill: the tier the request pins when
 * sent with it (a priced tier asked: that tier or standard processing serves it; `default`: standard,
 * the list price held already), else every priced tier, the dearest of them bounding the project's
 * tier (docs/catalog.md "Service tiers").
 */
function withTierPrices(step: RouteStep, tiers: Record<string, CostPrices>, p: Pricing): RouteStep {
  const tierPriceDeltas: Record<string, CostPrices> = {};
  for (const t in tiers) tierPriceDeltas[t] = priceDelta(tiers[t] as Record<string, number>, p.asked.prices) ?? {};
  const pinned = p.tier === undefined ? undefined : tiers[p.tier];
  if (pinned) p.held.push(pinned);
  // `default`: standard processing, the list price (held already)
  else if (p.tier !== 'default') for (const t in tiers) p.held.push(tiers[t]);
  return merged(step, { tierPriceDeltas });
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
