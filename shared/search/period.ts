/** Search allowances and limits run per UTC calendar month. */
export function periodOf(now = new Date()): string {
  return now.toISOString().slice(0, 7);
}

/** The first instant of the next period. */
export function periodEnd(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** Bounds of a `YYYY-MM` period. */
export function periodBounds(period: string): { start: Date; end: Date } {
  const [y, m] = period.split('-').map(Number);
  return { start: new Date(Date.UTC(y, m - 1, 1)), end: new Date(Date.UTC(y, m, 1)) };
}
