import { SearchUsage } from '../db/models';
import { logger } from '../logger';
import type { ChargeClass, KeySource } from './types';

export interface LedgerEntry {
  requestId: string;
  orgId: string;
  userId: string | null;
  apiKeyId: string | null;
  projectId: string | null;
  period: string;
  kind: 'search' | 'fetch';
  provider: string;
  keySource: KeySource;
  chargeClass: ChargeClass;
  priceMicros: number;
}

/**
 * Settles one search into the ledger (idempotent on the request id). A failed write is logged, not
 * thrown: the search was delivered, and the Redis counters already hold it (conservative for limits).
 */
export async function recordSearch(e: LedgerEntry): Promise<void> {
  try {
    // one INSERT … ON CONFLICT DO NOTHING (request_id is unique)
    await SearchUsage.bulkCreate([{ ...e, priceMicros: String(e.priceMicros) }], { ignoreDuplicates: true });
  } catch (err) {
    logger.error({ err, requestId: e.requestId, orgId: e.orgId }, 'could not write the search ledger row');
  }
}
