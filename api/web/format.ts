/**
 * How the pages of both interfaces write figures and times, so one figure reads the same on every
 * page (the dashboard's key table, the console's organization page, the Activity details).
 */

/** US dollars: `$0` for none, six decimals under a cent (a test key's spend is a few millionths), else cents. */
export const usd = (x: number) => (x === 0 ? '$0' : x < 0.01 ? `$${x.toFixed(6)}` : `$${x.toFixed(2)}`);

/** A budget's period in words: `per day`, `per month`, `in total`. */
export const perPeriod = (period: string) => (period === 'total' ? 'in total' : `per ${period}`);

/** A budget (micro-dollars and period) as the pages write it: `$2.50 per day`, `$0.000020 in total`. */
export const budgetText = (micros: number, period: string) => `${usd(micros / 1e6)} ${perPeriod(period)}`;

const UNTIL = { day: 10, minute: 16, second: 19, ms: 23 } as const;

/**
 * A UTC instant as the pages show it: `2026-12-04 15:25` (to the `day`: `2026-12-04`, to the `second`: `2026-12-04 15:25:11`, to
 * the `ms`: `2026-12-04 15:25:11.873`), from a Date or an ISO string such as a log row's
 * `2026-12-04T15:25:11.873000Z`.
 */
export function utcText(t: Date | string, to: keyof typeof UNTIL = 'minute'): string {
  const iso = typeof t === 'string' ? t : t.toISOString();
  return iso.slice(0, UNTIL[to]).replace('T', ' ');
}
