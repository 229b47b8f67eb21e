/**
 * How the pages of both interfaces write figures and times, so one figure reads the same on every
 * page (the dashboard's key table, the console's organization page, the Activity details).
 */

/** A count and its noun, singular for one: `1 request`, `12,345 requests`. */
export const counted = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

/** A count with thousands separators: `12,345`. */
export const count = (n: number) => fixed(n, 0);

/**
 * A figure to `digits` decimals with thousands separators: `1,234.500000`. Rounded as `toFixed`
 * rounds, so a page shows the digits the management API's figures and the tests compute.
 */
export function fixed(x: number, digits: number): string {
  const [whole, part] = x.toFixed(digits).split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${part === undefined ? '' : `.${part}`}`;
}

/** US dollars: `$0` for none, six decimals under a cent (a test key's spend is a few millionths), else cents: `$1,234.50`. */
export const usd = (x: number) => (x === 0 ? '$0' : `$${fixed(x, x < 0.01 ? 6 : 2)}`);

/** Micro-dollars as dollars to the micro-dollar, as the usage and Activity tables write cost: `$1,234.567890`. */
export const usdMicros = (micros: number) => `$${fixed(micros / 1e6, 6)}`;

/** A budget's period in words: `per day`, `per month`, `in total`. */
export const perPeriod = (period: string) => (period === 'total' ? 'in total' : `per ${period}`);

/** A budget (micro-dollars and period) as the pages write it: `$2.50 per day`, `$0.000020 in total`. */
export const budgetText = (micros: number, period: string) => `${usd(micros / 1e6)} ${perPeriod(period)}`;

/** A budget's state as the pages write it: `$0.12 spent, $0.01 reserved of $5.00 per day; $4.87 left`. */
export const budgetFigures = (b: { spent_usd: number; reserved_usd: number; limit_usd: number; period: string; remaining_usd: number }) =>
  `${usd(b.spent_usd)} spent, ${usd(b.reserved_usd)} reserved of ${usd(b.limit_usd)} ${perPeriod(b.period)}; ${usd(b.remaining_usd)} left`;

/** Rate limits as the pages write them: `60 req/min, 1,000 tok/min`, or `none`. */
export const rateText = (rpm: number | null | undefined, tpm: number | null | undefined) => [rpm ? `${count(rpm)} req/min` : '', tpm ? `${count(tpm)} tok/min` : ''].filter(Boolean).join(', ') || 'none';

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
