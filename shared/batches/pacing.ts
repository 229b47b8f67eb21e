import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';

/**
 * How a batch is paced (workers/batch/runner.ts, docs/batches.md): the refusals that hold a line
 * back instead of failing it, and how long the batch then waits before any runner sends it more.
 */

/**
 * The org's lane for batch lines is full (its concurrent-request count, or its queue's backlog): the
 * line goes back to pending under the same request id (heldBack).
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

/** The store away (Redis or Postgres; also a worker whose store went away mid-job). */
const STORE_AWAY = 'service_unavailable';
/** The key's (or its member's) rpm / tpm, refused before anything was queued. */
const RATE_LIMITED = 'rate_limit_exceeded';
/** The upstream provider's 429 after the gateway's own retries and fallbacks. */
export const UPSTREAM_LIMITED = 'upstream_rate_limited';
/** Failures of the gateway's own machinery: run again as the next attempt while attempts are left. */
const CRASHED = new Set(['worker_lost', 'client_closed_request']);

/**
 * Whether a line's refusal holds it back, and how it runs again: `same` under the same request id (a
 * full lane, the store away, the key's rpm / tpm for a minute: the batch is paced by them, as the
 * vendors' batches are by theirs), `upstream` as its next attempt after the provider's 429, `crash`
 * as its next attempt after a lost worker (`crashRetried`: attempts are left); undefined: the refusal
 * is the line's outcome (a line no minute can serve, its refusal saying `x-should-retry: false`, is errored). A held try is no
 * outcome and no request the caller made: the line app writes no Activity row for it
 * (api/ticket-app.ts), so the line's one row is its outcome's (docs/observability.md).
 */
export function heldBack(code: string, retryable: boolean, crashRetried: boolean): 'same' | 'upstream' | 'crash' | undefined {
  if (LANE_FULL.has(code) || code === STORE_AWAY || (code === RATE_LIMITED && retryable)) return 'same';
  if (code === UPSTREAM_LIMITED) return 'upstream';
  if (CRASHED.has(code) && crashRetried) return 'crash';
  return undefined;
}

/**
 * Sends the batch no new line for `ms`, from every runner process: the pause is a key in Redis with
 * that TTL (a later pause only lengthens it, PEXPIRE GT), so two runners feeding the same batch wait
 * out the same 429 together instead of each on its own.
 */
export async function pauseBatch(redis: RedisClient, batchId: string, ms: number): Promise<void> {
  const key = keys.batchPause(batchId);
  await redis.multi().set(key, '1', 'PX', ms, 'NX').pexpire(key, ms, 'GT').exec();
}

/** How long the batch is still paused (ms; 0: not paused), whichever runner paused it. */
export async function batchPausedMs(redis: RedisClient, batchId: string): Promise<number> {
  return Math.max(0, await redis.pttl(keys.batchPause(batchId)));
}
