import { QueryTypes } from 'sequelize';
import { db } from './sequelize';
import { config } from '../config/env';
import { logger } from '../logger';
import { addDays, closedDays, rollupDay, utcDay } from '../metering/rollups';
import { ok, warn, type Check } from '../preflight/check';

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

/**
 * The rows in the DEFAULT partition of `table` (a day that had no partition when they came) and the
 * days they span. Retention never drops them, and a day partition cannot be made for a day they hold
 * (Postgres refuses it: check_violation), so an operator moves or deletes them.
 */
export async function defaultPartitionRows(table: DayPartitioned): Promise<{ rows: number; first: string | null; last: string | null }> {
  const [r] = await db().query<{ rows: string; first: string | null; last: string | null }>(
    `SELECT count(*) AS rows, to_char(min(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS first, to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS last FROM "${table}_default"`,
    { type: QueryTypes.SELECT },
  );
  return { rows: Number(r?.rows ?? 0), first: r?.first ?? null, last: r?.last ?? null };
}

/** `gateway doctor`: a warning per table whose DEFAULT partition holds rows. */
export async function checkDefaultPartitions(): Promise<Check[]> {
  return Promise.all((Object.keys(DAY_PARTITIONED) as DayPartitioned[]).map(async (table) => {
    const d = await defaultPartitionRows(table);
    return d.rows
      ? warn(`${table}_default`, `${d.rows} row(s) from ${d.first} to ${d.last} in the DEFAULT partition: never dropped by retention, and those days get no partition of their own; move or delete them (docs/observability.md)`)
      : ok(`${table}_default`, 'empty');
  }));
}

/** Clock task: partitions for yesterday to DAYS_AHEAD ahead exist, and those past retention are gone. */
export async function maintainPartitions(now = new Date()): Promise<void> {
  for (const [table, retention] of Object.entries(DAY_PARTITIONED) as Array<[DayPartitioned, () => number]>) {
    await ensureDayPartitions(table, addDays(utcDay(now), -1), DAYS_AHEAD + 2);
    await dropExpiredPartitions(table, retention(), now);
    const d = await defaultPartitionRows(table);
    if (d.rows) logger.warn({ table, rows: d.rows, first: d.first, last: d.last }, 'rows in the DEFAULT partition: never dropped by retention, and their days get no partition; move or delete them');
  }
}
