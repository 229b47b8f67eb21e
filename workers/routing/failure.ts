import { ApiError } from '../../shared/errors/ApiError';
import { failureInfo } from '../providers/http';
import type { Verdict } from '../../shared/routing/pool-state';
import type { CancelSignal } from '../../shared/cancel-source';

export interface Failure {
  /** Another attempt may succeed (and nothing reached the client yet: the caller checks that). */
  retryable: boolean;
  verdict: Verdict;
  /** The upstream's Retry-After, when it sent one. */
  retryAfterMs?: number;
  /** Metric label. */
  class: string;
}

/** Codes an adapter raises for a failure inside an answer (a malformed body, an in-stream overload). */
const RETRYABLE_CODES = new Set(['upstream_error', 'upstream_unavailable', 'upstream_rate_limited']);

/**
 * Connection errors, no headers in time, 429 and 5xx are retryable and cool the deployment down;
 * any other upstream answer (400, 401, 404...) is returned as it is and counts as the deployment
 * being up. A cancelled attempt gives no verdict.
 */
export function classify(err: unknown, signal: CancelSignal): Failure {
  if (signal.aborted) return { retryable: false, verdict: 'none', class: 'cancelled' };
  const info = failureInfo(err);
  if (info) {
    if (info.status === 0) return { retryable: true, verdict: 'down', class: /did not answer within/.test((err as Error).message) ? 'timeout' : 'connect' };
    if (info.status === 429) return { retryable: true, verdict: 'down', retryAfterMs: info.retryAfterMs, class: 'status_429' };
    if (info.status >= 500) return { retryable: true, verdict: 'down', retryAfterMs: info.retryAfterMs, class: 'status_5xx' };
    return { retryable: false, verdict: 'up', class: `status_${info.status}` };
  }
  if (err instanceof ApiError) {
    return RETRYABLE_CODES.has(err.code) ? { retryable: true, verdict: 'down', class: 'stream' } : { retryable: false, verdict: 'none', class: 'other' };
  }
  // A body cut before anything reached the client (the socket closed mid-answer), or similar.
  return { retryable: true, verdict: 'down', class: 'other' };
}
