import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';

const DAY_MS = 86_400_000;
/** A day counts as closed once it was recomputed at least this long after it ended (in-flight inserts). */
export const SETTLE_MS = 2 * 60_000;

/** `YYYY-MM-DD` of the UTC day holding `t`. */
export const utcDay = (t: Date): string => t.toISOString().slice(0, 10);
export const dayStart = (day: string): Date => new Date(`${day}T00:00:00.000Z`);
export const addDays = (day: string, n: number): string => utcDay(new Date(dayStart(day).getTime() + n * DAY_MS));

/**
 * Recomputes the rollup rows of one UTC day from `usage_events` in one statement: aggregate the day's
 * events by (org, model, modality, passthrough), sum every numeric key of `units`, upsert the rows,
 * delete rows of the day that no longer have events, and stamp the day as rolled up. Re-running it
 * gives the same rows, and catches events that arrived late for the day.
 */
export async function rollupDay(day: string): Promise<void> {
  await db().query(
    `WITH events AS (
       SELECT org_id, model, modality, passthrough, input_tokens, output_tokens, units
         FROM usage_events WHERE created_at >= :start AND created_at < :end
     ), totals AS (
       SELECT org_id, model, modality, passthrough, count(*) AS requests,
              sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
         FROM events GROUP BY 1, 2, 3, 4
     ), unit_sums AS (
       SELECT org_id, model, modality, passthrough, jsonb_object_agg(key, total) AS units
         FROM (SELECT e.org_id, e.model, e.modality, e.passthrough, kv.key, sum((kv.value #>> '{}')::numeric) AS total
                 FROM events e CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(e.units) = 'object' THEN e.units ELSE '{}' END) kv
                WHERE jsonb_typeof(kv.value) = 'number'
                GROUP BY 1, 2, 3, 4, 5) per_key
        GROUP BY 1, 2, 3, 4
     ), fresh AS (
       SELECT t.*, coalesce(u.units, '{}'::jsonb) AS units
         FROM totals t LEFT JOIN unit_sums u USING (org_id, model, modality, passthrough)
     ), upserted AS (
       INSERT INTO usage_rollups (day, org_id, model, modality, passthrough, requests, input_tokens, output_tokens, units, updated_at)
       SELECT :day::date, org_id, model, modality, passthrough, requests, input_tokens, output_tokens, units, now() FROM fresh
       ON CONFLICT (day, org_id, model, modality, passthrough) DO UPDATE
         SET requests = EXCLUDED.requests, input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens,
             units = EXCLUDED.units, updated_at = EXCLUDED.updated_at
       RETURNING 1
     ), stale AS (
       DELETE FROM usage_rollups r WHERE r.day = :day::date AND NOT EXISTS (
         SELECT 1 FROM fresh f WHERE f.org_id = r.org_id AND f.model = r.model AND f.modality = r.modality AND f.passthrough = r.passthrough)
       RETURNING 1
     )
     INSERT INTO usage_rollup_days (day, rolled_up_at) VALUES (:day::date, statement_timestamp())
     ON CONFLICT (day) DO UPDATE SET rolled_up_at = EXCLUDED.rolled_up_at`,
    { replacements: { day, start: dayStart(day).toISOString(), end: dayStart(addDays(day, 1)).toISOString() } },
  );
}

/**
 * The closed days in [fromDay, toDay): days recomputed at least SETTLE_MS after they ended, whose
 * rollup rows therefore hold every event of the day. Other days are read from `usage_events`.
 */
export async function closedDays(fromDay: string | null, toDay: string | null): Promise<string[]> {
  const rows = await db().query<{ day: string }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day FROM usage_rollup_days
      WHERE rolled_up_at >= (day + 1)::timestamp AT TIME ZONE 'UTC' + make_interval(secs => :settle)
        ${fromDay ? 'AND day >= :fromDay::date' : ''} ${toDay ? 'AND day < :toDay::date' : ''}
      ORDER BY day`,
    { type: QueryTypes.SELECT, replacements: { settle: SETTLE_MS / 1000, fromDay, toDay } },
  );
  return rows.map((r) => r.day);
}
