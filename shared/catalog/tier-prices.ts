import Joi from 'joi';
import type { CostPrices } from '../limits/usage-cost';

/**
 * A chat model's per-tier unit prices (`prices.service_tiers`, micro-dollars per token): what a
 * request served on OpenAI's Flex, Scale or Priority processing costs instead of the model's list
 * price. OpenAI bills those tiers at their own per-token rates ("Tokens served by Priority
 * processing will be billed on a per-token basis, priced at a premium relative to Standard
 * processing rates": openai.com/api-priority-processing; Flex is cheaper), so on the platform's
 * credential a tier is sent upstream only when the operator priced it (docs/catalog.md "Service tiers").
 * `auto` and `default` are the standard processing a request without `service_tier` gets and have
 * no price of their own; `fast` is billed as `priority` (OpenAI's API document, ServiceTier: "The
 * response will show `service_tier=priority` regardless of if you specify `service_tier=fast` or
 * `priority`").
 */
export const PRICED_TIERS = ['flex', 'scale', 'priority'] as const;

const price = Joi.number().min(0).required();
const tierPrice = Joi.object({ input_token: price, output_token: price });

/** The `service_tiers` key of a model's `prices` (the management API's and the catalog file's). */
export const serviceTiersSchema = Joi.object(Object.fromEntries(PRICED_TIERS.map((t) => [t, tierPrice])));

/** A model's `prices` as written: micro-dollars per unit, and optionally `service_tiers`. */
export const pricesSchema = (unit: RegExp) => Joi.object({ service_tiers: serviceTiersSchema }).pattern(unit, Joi.number().min(0));

/** The tier a request asking `asked` is billed at when served on it, or undefined for standard processing (auto, default, none). */
export function billedTier(asked: unknown): string | undefined {
  if (typeof asked !== 'string' || asked === 'auto' || asked === 'default') return undefined;
  return asked === 'fast' ? 'priority' : asked;
}

/**
 * The tier a chat request's `service_tier` pins it to, as the budget holds it (api/dispatch/step-prices.ts):
 * a priced tier asked (billedTier), or `default` ("processed with the standard pricing and performance
 * for the selected model", OpenAI's API document, ServiceTier); undefined for none or `auto`, which the
 * project's configured tier serves ("the request will be processed with the service tier configured in
 * the Project settings", ibid.), any tier the operator's project is set to.
 */
export function pinnedTier(asked: unknown): string | undefined {
  return asked === 'default' ? asked : billedTier(asked);
}

/** One priced tier's token prices (micro-dollars per token). */
export interface TierPrice {
  input_token: number;
  output_token: number;
}

/**
 * A model's `prices` as stored (the models table's JSONB, as pricesSchema takes it): micro-dollars per
 * unit, and `service_tiers`, an object of tier prices. A reader of unit prices takes the list prices
 * of splitPrices (the catalog's CatalogModel.prices), never a unit of this.
 */
export interface StoredPrices {
  [unit: string]: number | StoredTiers | undefined;
  service_tiers?: StoredTiers;
}

/** `prices.service_tiers` as stored: a priced tier's prices (PRICED_TIERS). */
export type StoredTiers = Partial<Record<(typeof PRICED_TIERS)[number], TierPrice>>;

export interface SplitPrices {
  /** The list prices (numbers only). */
  prices: Record<string, number>;
  /** The per-tier prices, when the model has any. */
  tierPrices?: Record<string, CostPrices>;
}

/** A stored `prices` object split into the list prices and the per-tier prices (as the catalog holds them). */
export function splitPrices(stored: StoredPrices): SplitPrices {
  const tiers: unknown = stored.service_tiers;
  if (tiers === undefined) return { prices: stored as Record<string, number> };
  const prices: Record<string, number> = {};
  for (const [k, v] of Object.entries(stored)) if (typeof v === 'number') prices[k] = v;
  const tierPrices: Record<string, CostPrices> = {};
  if (tiers && typeof tiers === 'object') {
    for (const [t, p] of Object.entries(tiers as Record<string, { input_token?: unknown; output_token?: unknown }>)) {
      if (p && typeof p.input_token === 'number' && typeof p.output_token === 'number') tierPrices[t] = { input_token: p.input_token, output_token: p.output_token };
    }
  }
  return Object.keys(tierPrices).length ? { prices, tierPrices } : { prices };
}
