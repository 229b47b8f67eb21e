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

/**
 * US dollars as billing dashboards write them: cents with thousands separators from a dollar on
 * (`$1,234.50`), `$0.00` for none, and an amount under a dollar to three significant digits with at
 * least two decimals, so a request's few cents or millionths do not read as a rounder figure
 * (`$0.0153`, `$0.50`, `$0.000123`, `$0.00002`). The CSV export and a request's details keep the
 * exact micro-dollars.
 */
export function usd(x: number): string {
  const a = Math.abs(x);
  const sign = x < 0 ? '-' : '';
  if (a === 0) return '$0.00';
  if (Number(a.toPrecision(3)) >= 1) return `${sign}$${fixed(a, 2)}`;
  // to the third significant digit: 0.000123's first is at the 4th decimal, so 6 decimals; trailing zeros dropped down to cents
  const decimals = Math.max(2, 2 - Math.floor(Math.log10(Number(a.toPrecision(3)))));
  return `${sign}$${a.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

/** Micro-dollars as dollars, as every table and chart writes cost (usd): `$1,234.57`, `$0.000047`. */
export const usdMicros = (micros: number) => usd(micros / 1e6);

/** A budget's period in words: `per day`, `per month`, `in total`. */
export const perPeriod = (period: string) => (period === 'total' ? 'in total' : `per ${period}`);

/** A budget (micro-dollars and period) as the pages write it: `$2.50 per day`, `$0.00002 in total`. */
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
