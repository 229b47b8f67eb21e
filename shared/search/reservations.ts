import { usagePool } from '../metering/usage';
import { config } from '../config/env';
import { logger } from '../logger';
import type { KeySource } from './types';

/**
 * Searches reserved and not yet settled, in Postgres (table search_reservations): what the Redis
 * counters hold beyond the ledger. A row is written once the gate admits a search and goes when it
 * settles (recordSearch deletes it in the statement that writes the ledger row) or is given back.
 * Rows past `expires_at` (the search's deadline and a minute) are of a pod that died mid-search.
 */
export interface HeldSearch {
  requestId: string;
  orgId: string;
  userId: string | null;
  period: string;
  keySource: KeySource;
}

const MARGIN_MS = 60_000;

/** Records an admitted search. A failed write is logged, not thrown: the Redis counters hold it. */
export async function holdReservation(h: HeldSearch): Promise<void> {
  try {
    await usagePool().query(
      `INSERT INTO search_reservations (request_id, org_id, user_id, period, key_source, expires_at)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6)) ON CONFLICT (request_id) DO NOTHING`,
      [h.requestId, h.orgId, h.userId, h.period, h.keySource, (config().searchTimeoutMs + MARGIN_MS) / 1000],
    );
  } catch (err) {
    logger.warn({ err, requestId: h.requestId, orgId: h.orgId }, 'could not record the search reservation');
  }
}

/** Forgets a reservation given back (the search failed). */
export async function dropReservation(requestId: string): Promise<void> {
  try {
    await usagePool().query('DELETE FROM search_reservations WHERE request_id = $1', [requestId]);
  } catch (err) {
    logger.warn({ err, requestId }, 'could not drop the search reservation');
  }
}

/**
 * What a period's counters should hold: the ledger's searches plus the live reservations, all of
 * them, the platform-key ones and the member's, read in one statement (one snapshot: a search that
 * settles meanwhile is counted once, as a reservation or as a ledger row). Expired reservations go.
 */
export async function periodCounts(orgId: string, period: string, userId: string | null): Promise<{ all: number; platform: number; member: number }> {
  const db = usagePool();
  await db.query('DELETE FROM search_reservations WHERE org_id = $1 AND expires_at <= now()', [orgId]);
  const { rows } = await db.query<{ all: string; platform: string; member: string }>(
    `SELECT count(*) AS all, count(*) FILTER (WHERE key_source = 'platform') AS platform, count(*) FILTER (WHERE user_id = $3) AS member
       FROM (SELECT key_source, user_id FROM search_usage WHERE org_id = $1 AND period = $2
             UNION ALL
             SELECT key_source, user_id FROM search_reservations WHERE org_id = $1 AND period = $2 AND expires_at > now()) held`,
    [orgId, period, userId],
  );
  return { all: Number(rows[0].all), platform: Number(rows[0].platform), member: Number(rows[0].member) };
}
