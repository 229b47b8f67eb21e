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
 * `batch_price_multiplier` (plan, overridden per org, both dialects) over the gateway defaults, which
 * are each dialect's vendor's own limits: OpenAI's Batch API (BATCH_MAX_LINES 50,000 requests,
 * BATCH_MAX_FILE_BYTES 200 MiB input file), Anthropic's Message Batches (MESSAGE_BATCH_MAX_REQUESTS
 * 100,000 requests, MESSAGE_BATCH_MAX_BYTES 256 MiB), then BATCH_MAX_IN_PROGRESS and BATCH_PRICE_MULTIPLIER.
 */
export function batchLimits(org: OrgContext, dialect: 'openai' | 'anthropic'): BatchLimits {
  const d = config().batches;
  const e = org.entitlements ?? {};
  const anthropic = dialect === 'anthropic';
  return {
    maxLines: num(e.batch_max_lines, 1, 1e9) ?? (anthropic ? d.messageBatchMaxRequests : d.maxLines),
    maxFileBytes: num(e.batch_max_file_bytes, 1, 1e12) ?? (anthropic ? d.messageBatchMaxBytes : d.maxFileBytes),
    maxInProgress: num(e.batch_max_in_progress, 0, 1e6) ?? d.maxInProgress,
    priceMultiplier: num(e.batch_price_multiplier, 0, 1) ?? d.priceMultiplier,
  };
}
