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
 * The statement that settles one search into the ledger: `INSERT … ON CONFLICT (request_id) DO
 * NOTHING`, deleting the search's reservation in the same statement (a rebuild of the counters sees
 * the search once, reserved or settled; shared/search/reservations.ts). Positional parameters: run
 * alone (recordSearch) or inside a batch line's transaction (shared/batches/store.ts finishLine).
 */
export function ledgerStatement(e: LedgerEntry): { sql: string; params: unknown[] } {
  return {
    sql: `WITH settled AS (DELETE FROM search_reservations WHERE request_id = $2)
       INSERT INTO search_usage (id, request_id, org_id, user_id, api_key_id, project_id, period, kind, provider, key_source, charge_class, price_micros, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now()) ON CONFLICT (request_id) DO NOTHING`,
    params: [randomUUID(), e.requestId, e.orgId, e.userId, e.apiKeyId, e.projectId, e.period, e.kind, e.provider, e.keySource, e.chargeClass, e.priceMicros],
  };
}

/**
 * A batch line's search, admitted and answered but not yet charged: its ledger row is written in the
 * transaction that records the line as succeeded, and `settle` then charges the key's budgets; a
 * line that does not succeed (its attempt failed and runs again, or it errored) gives it back with
 * `release` (its quota and budget holds), so a retried line's searches are billed once, with the
 * answer that is delivered (docs/batches.md).
 */
export interface HeldSearchCharge {
  entry: LedgerEntry;
  settle(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Settles one search into the ledger (ledgerStatement) on the usage pool (synchronous_commit off, as
 * usage events: the answer does not wait for the WAL flush; see shared/metering/usage.ts). A failed
 * write is logged, not thrown: the search was delivered, and the Redis counters already hold it
 * (conservative for limits).
 */
export async function recordSearch(e: LedgerEntry): Promise<void> {
  try {
    const { sql, params } = ledgerStatement(e);
    await usagePool().query(sql, params);
  } catch (err) {
    logger.error({ err, requestId: e.requestId, orgId: e.orgId }, 'could not write the search ledger row');
  }
}
