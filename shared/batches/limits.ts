import { config } from '../config/env';
import type { OrgContext } from '../tenancy/directory';

/** An org's batch limits and price: its plan's (or its own) entitlement when set, else the gateway default. */
export interface BatchLimits {
  maxLines: number;
  maxFileBytes: number;
  maxInProgress: number;
  /** A batch line is billed at the model's price times this (0..1). */
  priceMultiplier: number;
}

function num(v: unknown, min: number, max: number): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? v : undefined;
}

/**
 * Entitlements `batch_max_lines`, `batch_max_file_bytes`, `batch_max_in_progress` and
 * `batch_price_multiplier` (plan, overridden per org) over BATCH_MAX_LINES, BATCH_MAX_FILE_BYTES,
 * BATCH_MAX_IN_PROGRESS and BATCH_PRICE_MULTIPLIER.
 */
export function batchLimits(org: OrgContext): BatchLimits {
  const d = config().batches;
  const e = org.entitlements ?? {};
  return {
    maxLines: num(e.batch_max_lines, 1, 1e9) ?? d.maxLines,
    maxFileBytes: num(e.batch_max_file_bytes, 1, 1e12) ?? d.maxFileBytes,
    maxInProgress: num(e.batch_max_in_progress, 0, 1e6) ?? d.maxInProgress,
    priceMultiplier: num(e.batch_price_multiplier, 0, 1) ?? d.priceMultiplier,
  };
}
