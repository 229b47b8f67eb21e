import { randomUUID } from 'crypto';
import { usagePool } from '../metering/usage';
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
 * Settles one search into the ledger: one `INSERT … ON CONFLICT (request_id) DO NOTHING` on the usage
 * pool (synchronous_commit off, as usage events: the answer does not wait for the WAL flush; see
 * shared/metering/usage.ts), which deletes the search's reservation in the same statement (a rebuild
 * of the counters sees the search once, reserved or settled; shared/search/reservations.ts). A failed
 * write is logged, not thrown: the search was delivered, and the Redis counters already hold it
 * (conservative for limits).
 */
export async function recordSearch(e: LedgerEntry): Promise<void> {
  try {
    await usagePool().query(
      `WITH settled AS (DELETE FROM search_reservations WHERE request_id = $2)
       INSERT INTO search_usage (id, request_id, org_id, user_id, api_key_id, project_id, period, kind, provider, key_source, charge_class, price_micros, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now()) ON CONFLICT (request_id) DO NOTHING`,
      [randomUUID(), e.requestId, e.orgId, e.userId, e.apiKeyId, e.projectId, e.period, e.kind, e.provider, e.keySource, e.chargeClass, e.priceMicros],
    );
  } catch (err) {
    logger.error({ err, requestId: e.requestId, orgId: e.orgId }, 'could not write the search ledger row');
  }
}
