import { addDays, rollupDay, utcDay } from '../../shared/metering/rollups';

/**
 * Clock task: recomputes the usage rollups of today and yesterday (UTC), so events recorded just
 * before midnight, after the last run of their day, are caught by the first run after midnight.
 */
export async function rollupUsage(now: Date = new Date()): Promise<string[]> {
  const today = utcDay(now);
  const days = [addDays(today, -1), today];
  for (const day of days) await rollupDay(day);
  return days;
}
