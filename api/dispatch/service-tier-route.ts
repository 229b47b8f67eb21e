import type { CatalogModel } from '../../shared/catalog/catalog';
import type { RouteStep } from '../../shared/queues/payloads';
import { priceDelta, type CostPrices } from '../../shared/limits/usage-cost';
import { merged } from '../../shared/merged';

/**
 * A chat step of a request asking an OpenAI service tier (`tier`: flex, scale or priority, as
 * tier-prices.ts billedTier reads it) on the platform's credential. When the step's model `m` prices
 * that tier, the step carries that price's difference from the list price of the model asked for
 * (`asked`) as `tierPriceDelta` ({} when equal), the worker sends the tier and bills an answer served
 * on it at that price; and `held` (the prices a budget holds the request at: route.ts `dearest`) takes
 * the tier's price. When it does not, the step is returned as it is: the worker sends the request
 * without `service_tier` (standard processing, billed at the list price).
 */
export function withTierPrice(step: RouteStep, m: CatalogModel, asked: CatalogModel, tier: string, held: CostPrices[]): RouteStep {
  const p = m.tierPrices?.[tier];
  if (!p) return step;
  held.push(p);
  return merged(step, { tierPriceDelta: priceDelta(p as Record<string, number>, asked.prices) ?? {} });
}
