import type { Request } from 'express';
import type { RateWindow } from '../../shared/limits/limits';
import { dialectOf, routeOf } from '../middleware/request-log';

/**
 * A time left as OpenAI writes it in `x-ratelimit-reset-*` (Go's duration form): `59ms`, `1s`,
 * `17.28s`, `1m0s`.
 */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = `${Number(((ms % 60_000) / 1000).toFixed(3))}s`;
  return minutes ? `${minutes}m${seconds}` : seconds;
}

/**
 * The key's rate-limit figures under the names the dialect's clients read: Anthropic's
 * `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}` (reset an RFC 3339 time) on the
 * messages dialect, OpenAI's `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset a
 * duration) on every other path; only for the limits the key has.
 */
export function rateLimitHeaders(anthropic: boolean, w: RateWindow): Record<string, string> {
  const out: Record<string, string> = {};
  const name = anthropic ? (unit: string, f: string) => `anthropic-ratelimit-${unit}-${f}` : (unit: string, f: string) => `x-ratelimit-${f}-${unit}`;
  const reset = anthropic ? `${new Date(w.resetsAt).toISOString().slice(0, 19)}Z` : goDuration(w.msLeft);
  for (const [unit, l] of [['requests', w.requests], ['tokens', w.tokens]] as const) {
    if (!l) continue;
    out[name(unit, 'limit')] = String(l.limit);
    out[name(unit, 'remaining')] = String(Math.max(0, l.limit - l.counted));
    out[name(unit, 'reset')] = reset;
  }
  return out;
}

/**
 * Sets the rate-limit headers on the request's answer (its head is not out yet: admission comes
 * before the first chunk), the one place they are set: an answer, an error after admission, and the
 * 429 `rate_limit_exceeded` refusal (the error handler keeps the headers already set) all carry them.
 */
export function setRateHeaders(req: Request, w: RateWindow): void {
  const res = req.res;
  if (!res || res.headersSent) return;
  res.set(rateLimitHeaders(dialectOf(routeOf(req)) === 'anthropic', w));
}
