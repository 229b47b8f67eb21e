import { addDays, closedDays, dayStart, rollupDay, SETTLE_MS, utcDay } from '../../shared/metering/rollups';
import { config } from '../../shared/config/env';

/**
 * How many ended days back the clock looks for a day not closed yet: a clock down for up to this long
 * catches up by itself; older days are `gateway usage rollup --from <day> --to <day>`'s.
 */
export const CATCH_UP_DAYS = 7;

/**
 * Clock task: rolls up each ended UTC day of the last CATCH_UP_DAYS that is not closed yet (recomputed
 * at least SETTLE_MS after it ended: shared/metering/rollups.ts), once: normally yesterday, in the
 * first run two minutes or more after midnight, which closes it. A closed day is never recomputed,
 * and today never is: the stats read an open day from `usage_events`, so its rollup rows would be read
 * by nobody. Events are stamped when the drainer writes them, so none lands in a day once it is
 * closed; events written for an older day (imports) are rolled up by the CLI. Until 2026-12-02 each
 * run read today's and yesterday's events whole, every 5 minutes, all day (docs/benchmark.md, issue
 * 29, sixteenth session). Returns the days it rolled up.
 */
export async function rollupUsage(now: Date = new Date()): Promise<string[]> {
  const today = utcDay(now);
  // never a day whose events retention may have dropped (it was rolled up before it went): recomputed, it would lose its rows
  const from = addDays(today, -Math.min(CATCH_UP_DAYS, config().usageEventsRetentionDays - 1));
  const closed = new Set(await closedDays(from, today));
  const days: string[] = [];
  for (let day = from; day < today; day = addDays(day, 1)) {
    // closed; or ended less than SETTLE_MS ago: rolled up now it would not close, and be read again in the next run
    if (closed.has(day) || now.getTime() < dayStart(addDays(day, 1)).getTime() + SETTLE_MS) continue;
    await rollupDay(day);
    days.push(day);
  }
  return days;
}
