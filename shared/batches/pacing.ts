/**
 * How a batch is paced (workers/batch/runner.ts, docs/batches.md): the refusals that hold a line
 * back instead of failing it, and how long the batch then waits before the runner sends it more.
 */

/**
 * The org's lane for batch lines is full (its concurrent-request count, or its queue's backlog): the
 * line goes back to pending under the same request id. Held, not failed: the line app writes no
 * Activity row for it (api/ticket-app.ts); the line's row is the one of its answer.
 */
export const LANE_FULL = new Set(['CONCURRENT_REQUEST_LIMIT_EXCEEDED', 'embeddings_lanes_exhausted']);

/** The longest a batch waits on one refusal before it is tried again. */
export const PAUSE_MAX_MS = 10_000;

/** The longest a batch waits after an upstream provider's 429 (UPSTREAM_LIMITED in the runner). */
export const UPSTREAM_PAUSE_MAX_MS = 60_000;

/** The pause a refusal's Retry-After (seconds, as the header gives it) asks for: at least 1 s, at most PAUSE_MAX_MS. */
export function pauseMs(retryAfter: unknown): number {
  return Math.min(Math.max(Number(retryAfter) * 1000 || 1000, 1000), PAUSE_MAX_MS);
}

/**
 * The pause after an upstream provider's 429, the line's `waits`-th (from 0): its Retry-After, and at
 * least a second doubled at each wait, at most UPSTREAM_PAUSE_MAX_MS, so a provider that stays
 * limited for hours sees a line of a batch about once a minute, not every second.
 */
export function upstreamPauseMs(retryAfter: unknown, waits: number): number {
  return Math.min(Math.max(Number(retryAfter) * 1000 || 0, 1000 * 2 ** Math.min(waits, 16)), UPSTREAM_PAUSE_MAX_MS);
}
