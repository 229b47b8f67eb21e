/** Helpers every adapter uses to map a provider's fields onto the spec's result shape. */

/** `YYYY-MM-DD` from an ISO date or date-time, else undefined (relative ages like "3 days ago" are dropped). */
export function isoDay(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(v.trim());
  if (m) return `${m[1]}-${m[2]}-${m[3]}`;
  const t = Date.parse(v);
  return Number.isFinite(t) && /\d{4}/.test(v) ? new Date(t).toISOString().slice(0, 10) : undefined;
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** A provider's score when it sends a finite number, else one derived from rank (1 for the first, falling). */
export function scoreOf(v: unknown, index: number, total: number): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return Math.round((1 - index / Math.max(1, total)) * 1e4) / 1e4;
}

/** Strips the `<strong>` highlighting some providers put in snippets. */
export function plain(s: string): string {
  return s.replace(/<\/?[a-z][^>]*>/gi, '');
}

export function clampCount(count: number | undefined, range: { min: number; max: number; default: number }): number {
  if (count === undefined || !Number.isFinite(count)) return range.default;
  return Math.min(range.max, Math.max(range.min, Math.trunc(count)));
}
