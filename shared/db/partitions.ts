import { QueryTypes } from 'sequelize';
import { db } from './sequelize';
import { config } from '../config/env';
import { logger } from '../logger';
import { addDays, closedDays, rollupDay, utcDay } from '../metering/rollups';

/** The tables partitioned by UTC day (migrations 0026, 0027), each with its retention setting. */
export const DAY_PARTITIONED = {
  usage_events: () => config().usageEventsRetentionDays,
  request_logs: () => config().requestLogRetentionDays,
} as const;
export type DayPartitioned = keyof typeof DAY_PARTITIONED;

/** Day partitions created ahead of the clock. */
export const DAYS_AHEAD = 7;

/** Creates the missing day partitions of `table` from `from` (a UTC day) for `days` days; returns how many it made. */
export async function ensureDayPartitions(table: DayPartitioned, from: string, days: number): Promise<number> {
  const [row] = await db().query<{ made: number }>('SELECT gw_ensure_day_partitions(:table, :from::date, :days) AS made', {
    type: QueryTypes.SELECT,
    replacements: { table, from, days },
  });
  return Number(row?.made ?? 0);
}

/** The day partitions of `table`, oldest first, as `{ name, day }` (the DEFAULT partition is not one). */
export async function dayPartitions(table: DayPartitioned): Promise<Array<{ name: string; day: string }>> {
  const rows = await db().query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = :table::regclass ORDER BY c.relname`,
    { type: QueryTypes.SELECT, replacements: { table } },
  );
  const pattern = new RegExp(`^${table}_p(\\d{4})(\\d{2})(\\d{2})$`);
  return rows.flatMap((r) => {
    const m = pattern.exec(r.name);
    return m ? [{ name: r.name, day: `${m[1]}-${m[2]}-${m[3]}` }] : [];
  });
}

/**
 * Drops the day partitions of `table` older than `retentionDays` before `now` (whole days: with 30,
 * today and the 29 days before it stay). Never a DELETE: a partition goes at once. A `usage_events`
 * day is rolled up first when its rollup is not closed, so the long-term figures stay
 * (shared/metering/rollups.ts). Returns the days dropped.
 */
export async function dropExpiredPartitions(table: DayPartitioned, retentionDays: number, now = new Date()): Promise<string[]> {
  const keepFrom = addDays(utcDay(now), -(retentionDays - 1));
  const expired = (await dayPartitions(table)).filter((p) => p.day < keepFrom);
  if (!expired.length) return [];
  const closed = table === 'usage_events' ? new Set(await closedDays(expired[0].day, keepFrom)) : new Set<string>();
  for (const p of expired) {
    if (table === 'usage_events' && !closed.has(p.day)) await rollupDay(p.day);
    await db().query(`DROP TABLE IF EXISTS "${p.name}"`);
    logger.info({ table, day: p.day }, 'partition past retention dropped');
  }
  return expired.map((p) => p.day);
}

/** Clock task: partitions for yesterday to DAYS_AHEAD ahead exist, and those past retention are gone. */
export async function maintainPartitions(now = new Date()): Promise<void> {
  for (const [table, retention] of Object.entries(DAY_PARTITIONED) as Array<[DayPartitioned, () => number]>) {
    await ensureDayPartitions(table, addDays(utcDay(now), -1), DAYS_AHEAD + 2);
    await dropExpiredPartitions(table, retention(), now);
  }
}
