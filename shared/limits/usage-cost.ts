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
