import type { UsageRecord } from '../metering/usage';

/** The unit prices a reservation carries, so settlement needs no catalog (micro-dollars per unit). */
export interface CostPrices {
  input_token?: number;
  output_token?: number;
  audio_second?: number;
}

export function pricesOf(prices: Record<string, number>): CostPrices {
  return { input_token: prices.input_token ?? 0, output_token: prices.output_token ?? 0, audio_second: prices.audio_second ?? 0 };
}

/** The real cost of a usage event at the reserved prices: the ledger's arithmetic (ledger-spend.ts); a passthrough request's is 0. */
export function usageCost(u: UsageRecord, p: CostPrices): number {
  if (u.passthrough) return 0;
  const units = u.units ?? {};
  return (u.inputTokens ?? 0) * (p.input_token ?? 0) + (u.outputTokens ?? 0) * (p.output_token ?? 0)
    + ((units.audio_duration_ms ?? 0) / 1000) * (p.audio_second ?? 0) + (units.cost_micros ?? 0);
}

const UNITS = ['input_token', 'output_token', 'audio_second'] as const;

/**
 * Per unit, the served model's list prices minus those of the model asked for (micro-dollars): what a
 * fallback's usage costs beyond (or, negative, below) the same usage at the asked model's prices.
 * Undefined when no unit differs. The worker states it in the usage event's `units.cost_micros`
 * (`servedPriceMicros`), so every reader of the ledger, which prices an event at its `model`'s prices
 * plus `cost_micros`, and the settlement (usageCost) price the event at the model that served it.
 */
export function priceDelta(served: Record<string, number>, asked: Record<string, number>): CostPrices | undefined {
  const s = pricesOf(served);
  const a = pricesOf(asked);
  const d: CostPrices = {};
  for (const k of UNITS) if ((s[k] ?? 0) !== (a[k] ?? 0)) d[k] = (s[k] ?? 0) - (a[k] ?? 0);
  return Object.keys(d).length ? d : undefined;
}

/** The micro-dollars a fallback's `priceDelta` adds to its usage (tokens; a chat answer has no audio seconds). */
export function servedPriceMicros(u: { inputTokens: number; outputTokens: number }, d: CostPrices | undefined): number {
  return d ? u.inputTokens * (d.input_token ?? 0) + u.outputTokens * (d.output_token ?? 0) : 0;
}

/** The highest price of each unit over some models' prices: a request a fallback may serve is held at the dearest. */
export function dearest(all: CostPrices[]): CostPrices {
  const out: CostPrices = {};
  for (const k of UNITS) out[k] = Math.max(0, ...all.map((p) => p[k] ?? 0));
  return out;
}
