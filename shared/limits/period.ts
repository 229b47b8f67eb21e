import type { BudgetPeriod } from '../db/models/ApiKey';

/** One window of a budget: its id in Redis keys, where it starts and when it resets (UTC). */
export interface BudgetWindow {
  id: string;
  start: Date | null;
  resetsAt: Date | null;
}

export function budgetWindow(period: BudgetPeriod, now = new Date()): BudgetWindow {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  if (period === 'day') {
    const start = new Date(Date.UTC(y, m, now.getUTCDate()));
    return { id: `d${start.toISOString().slice(0, 10)}`, start, resetsAt: new Date(start.getTime() + 86_400_000) };
  }
  if (period === 'month') {
    const start = new Date(Date.UTC(y, m, 1));
    return { id: `m${start.toISOString().slice(0, 7)}`, start, resetsAt: new Date(Date.UTC(y, m + 1, 1)) };
  }
  return { id: 'total', start: null, resetsAt: null };
}

/** How long a window's hash lives in Redis: a day past its reset (late settlements still find it); total: for ever. */
export function windowTtlSeconds(w: BudgetWindow, now = new Date()): number {
  return w.resetsAt ? Math.ceil((w.resetsAt.getTime() - now.getTime()) / 1000) + 86_400 : -1;
}

/** The current rate-limit minute and the ms left in it. */
export function minuteWindow(now = Date.now()): { id: number; msLeft: number } {
  const id = Math.floor(now / 60_000);
  return { id, msLeft: (id + 1) * 60_000 - now };
}
