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
/** The error a background response whose pod was lost ends with when nothing resumes it. */
export const LOST_RUN = { code: 'server_error', message: 'The gateway lost this background response before it ended; send it again.' } as const;
/** How many times a background response is resumed on another pod before a lost pod's run fails it. */
export const RESUME_MAX = 3;
/** How long the clock leaves a resumable background response whose lease lapsed to the pods (they look every third of a lease). */
export const ADOPT_GRACE_MS = 2 * 60_000;

/** The background responses still `queued` or `in_progress` made before `now - SWEEP_MIN_AGE_MS` (the rows of a partial index, migration 0036). */
export async function runningBackground(now: number = Date.now()): Promise<string[]> {
  const rows = await db().query<{ id: string }>(
    `SELECT id FROM stored_responses
      WHERE response->>'background' = 'true' AND response->>'status' IN ('queued', 'in_progress') AND created_at < :cutoff`,
    { replacements: { cutoff: new Date(now - SWEEP_MIN_AGE_MS) }, type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.id);
}

/** Ends background responses still running `failed` with `code` and `message`; returns the ids it ended. */
export async function failBackground(ids: string[], code: string, message: string): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db().query<{ id: string }>(
    `UPDATE stored_responses
        SET response = response || jsonb_build_object('status', 'failed', 'error', jsonb_build_object('code', :code::text, 'message', :message::text))
      WHERE id IN (:ids) AND response->>'background' = 'true' AND response->>'status' IN ('queued', 'in_progress')
      RETURNING id`,
    { replacements: { ids, code, message }, type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.id);
}

/**
 * Whether the clock leaves a lapsed background response to the pods: it can be resumed (its request is
 * kept, and it was resumed fewer than RESUME_MAX times) and the clock first found it lapsed less than
 * ADOPT_GRACE_MS ago (a pod of an earlier version, which does not resume, leaves it to the clock).
 */
async function leftToPods(redis: RedisClient, id: string, now: number): Promise<boolean> {
  const n = await redis.hget(keys.backgroundResume(id), 'n');
  if (n === null || Number(n) >= RESUME_MAX) return false;
  await redis.set(keys.backgroundLapsed(id), String(now), 'PX', 10 * ADOPT_GRACE_MS, 'NX');
  return now - Number(await redis.get(keys.backgroundLapsed(id))) < ADOPT_GRACE_MS;
}

/**
 * The clock's sweep (every minute) of background responses whose pod stopped before they ended:
 * still `queued` or `in_progress` with no lease left in Redis. One a pod can resume
 * (api/routes/responses/background-resume.ts) is left to the pods for ADOPT_GRACE_MS; the rest end
 * `failed` with a `server_error`, so a poller stops within a few minutes of the pod's loss. Returns how
 * many it ended. A Redis whose data is new (keys.backgroundSweepArmed missing: first start, or a
 * restart that lost its data, leases with it) is not swept that minute: every live pod renews its
 * leases (recreating a lost one) within a third of BACKGROUND_LEASE_MS, before the next sweep.
 */
export async function failAbandonedBackground(redis: RedisClient, now: number = Date.now()): Promise<number> {
  if ((await redis.set(keys.backgroundSweepArmed(), '1', 'NX')) === 'OK') return 0;
  const running = await runningBackground(now);
  // one EXISTS a key (each key its own slot on a cluster); few responses run in the background at once
  const held = await Promise.all(running.map((id) => redis.exists(keys.backgroundJob(id))));
  const lapsed = running.filter((_, i) => held[i] === 0);
  const left = await Promise.all(lapsed.map((id) => leftToPods(redis, id, now)));
  const lost = lapsed.filter((_, i) => !left[i]);
  const failed = await failBackground(lost, LOST_RUN.code, LOST_RUN.message);
  await Promise.all(failed.map((id) => redis.del(keys.backgroundResume(id), keys.backgroundLapsed(id))));
  return failed.length;
}
