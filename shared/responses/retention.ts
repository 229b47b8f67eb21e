import { Op, QueryTypes, type WhereOptions } from 'sequelize';
import { config } from '../config/env';
import { db } from '../db/sequelize';
import { keys } from '../redis/keys';
import type { RedisClient } from '../redis/connection';

const DAY_MS = 86_400_000;

/**
 * The oldest creation time a stored response (responses dialect) may have and still be found:
 * `STORED_RESPONSES_RETENTION_DAYS` (30 by default, as OpenAI keeps response objects) before `now`;
 * null when they are kept until deleted (0).
 */
export function storedResponsesCutoff(now: number = Date.now()): Date | null {
  const days = config().storedResponsesRetentionDays;
  return days > 0 ? new Date(now - days * DAY_MS) : null;
}

/**
 * The condition a read of a stored response adds: younger than the retention. A response past it is
 * not found (404 `response_not_found`, as OpenAI answers for an expired one) from the moment it
 * expires, whether or not the clock's sweep has removed its row yet.
 */
export function withinRetention(now: number = Date.now()): WhereOptions {
  const cutoff = storedResponsesCutoff(now);
  return cutoff ? { createdAt: { [Op.gt]: cutoff } } : {};
}

/**
 * The clock's sweep (workers/cron/clock.ts, hourly): deletes the stored responses and the stored chat
 * completions past the retention, oldest first, `batch` rows a statement (short statements, each its
 * own transaction, beside the web pods' inserts). Returns how many went. Nothing when the retention is 0.
 */
export async function expireStoredResponses(now: number = Date.now(), batch = 1000): Promise<number> {
  const cutoff = storedResponsesCutoff(now);
  if (!cutoff) return 0;
  let removed = 0;
  for (const [table, key] of [['stored_responses', 'id'], ['stored_chat_completions', 'seq']] as const) {
    for (;;) {
      const rows = await db().query<{ k: string }>(
        `DELETE FROM ${table} WHERE ${key} IN (
           SELECT ${key} FROM ${table} WHERE created_at <= :cutoff ORDER BY created_at LIMIT :batch
         ) RETURNING ${key} AS k`,
        { replacements: { cutoff, batch }, type: QueryTypes.SELECT },
      );
      removed += rows.length;
      if (rows.length < batch) break;
    }
  }
  return removed;
}

/**
 * A pod's lease on a background response it runs: its job key (keys.backgroundJob), set with this TTL
 * when the response is made and renewed every third of it while it runs
 * (api/routes/responses/background.ts), deleted when it ends.
 */
export const BACKGROUND_LEASE_MS = 60_000;
/** A response younger than this is never swept (its lease was set before its row, so this is only a margin). */
const SWEEP_MIN_AGE_MS = 10_000;

/**
 * The clock's sweep (every minute) of background responses whose pod stopped before they ended (a
 * background response runs on the pod that took it): still `queued` or `in_progress` with no lease
 * left in Redis, they end `failed` with a `server_error`, so a poller stops within about a minute and
 * a half of the pod's loss. The rows read are those of a partial index (migration 0036). Returns how many.
 * A Redis whose data is new (keys.backgroundSweepArmed missing: first start, or a restart that lost its
 * data, leases with it) is not swept that minute: every live pod renews its leases (recreating a lost
 * one) within a third of BACKGROUND_LEASE_MS, before the next sweep.
 */
export async function failAbandonedBackground(redis: RedisClient, now: number = Date.now()): Promise<number> {
  if ((await redis.set(keys.backgroundSweepArmed(), '1', 'NX')) === 'OK') return 0;
  const running = await db().query<{ id: string }>(
    `SELECT id FROM stored_responses
      WHERE response->>'background' = 'true' AND response->>'status' IN ('queued', 'in_progress') AND created_at < :cutoff`,
    { replacements: { cutoff: new Date(now - SWEEP_MIN_AGE_MS) }, type: QueryTypes.SELECT },
  );
  // one EXISTS a key (each key its own slot on a cluster); few responses run in the background at once
  const held = await Promise.all(running.map((r) => redis.exists(keys.backgroundJob(r.id))));
  const lost = running.filter((_, i) => held[i] === 0).map((r) => r.id);
  if (!lost.length) return 0;
  const rows = await db().query<{ id: string }>(
    `UPDATE stored_responses
        SET response = response || jsonb_build_object('status', 'failed', 'error',
              jsonb_build_object('code', 'server_error', 'message', 'The gateway lost this background response before it ended; send it again.'))
      WHERE id IN (:lost) AND response->>'background' = 'true' AND response->>'status' IN ('queued', 'in_progress')
      RETURNING id`,
    { replacements: { lost }, type: QueryTypes.SELECT },
  );
  return rows.length;
}
