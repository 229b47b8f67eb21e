import path from 'path';
import type { Piscina } from 'piscina';
import countInline, { type CountTask } from './count.worker';
import { config } from '../config/env';
import { ApiError } from '../errors/ApiError';

/** Inputs up to this many UTF-8 bytes are counted on the event loop (well under a millisecond or so). */
const INLINE_BYTES = 32 * 1024;
/** No token of the gpt-tokenizer encodings is longer than this many bytes (as bounded.ts). */
const MAX_TOKEN_BYTES = 128;

let pool: Piscina | undefined;
let runs = 0;

function tokenizerPool(): Piscina {
  if (!pool) {
    const cfg = config();
    // loaded with the first large input, not at start (a web pod that never counts one holds none of it)
    const { Piscina: Pool } = require('piscina') as typeof import('piscina');
    pool = new Pool({
      filename: path.join(__dirname, 'count.worker.js'),
      maxThreads: cfg.tokenizerThreads,
      minThreads: 0,
      idleTimeout: 30_000,
      maxQueue: cfg.tokenizerThreads * 16,
    });
  }
  return pool;
}

export async function closeTokenizerPool(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.destroy();
}

/** Counting could not finish within the time budget (TOKEN_COUNT_TIMEOUT_MS); the caller picks the answer. */
export class TokenCountTimeout extends Error {}

/**
 * Total tokens of `texts` under `profile`, or `false` once over `limit`, bounded in time per request:
 * a byte check first (over `limit × 128` bytes cannot fit), small inputs on the event loop, large ones
 * on a worker-thread pool (TOKENIZER_THREADS) so one request never stalls the pod. A count that takes
 * longer than TOKEN_COUNT_TIMEOUT_MS, or whose `signal` aborts (its answer no longer wanted), is
 * abandoned, its thread freed (TokenCountTimeout); a full pool queue answers 503.
 */
export async function countTokens(profile: string | undefined, texts: string[], limit = Number.MAX_SAFE_INTEGER, signal?: AbortSignal): Promise<number | false> {
  let bytes = 0;
  for (const t of texts) bytes += Buffer.byteLength(t, 'utf8');
  if (bytes > limit * MAX_TOKEN_BYTES) return false;
  return (await run({ profile, texts, limit }, bytes, signal)) as number | false;
}

/**
 * Total tokens of `texts` for a decision an over-count only makes more careful (a key's limits, a
 * compaction or context-editing trigger, truncation): a count not finished within the time budget on
 * a busy pod is the texts' UTF-8 bytes, which no count exceeds (every token is at least a byte),
 * instead of a failed request. The answer's usage settles what was reserved.
 */
export async function countTokensAtMost(profile: string | undefined, texts: string[]): Promise<number> {
  try {
    return (await countTokens(profile, texts)) as number;
  } catch (err) {
    if (!(err instanceof TokenCountTimeout)) throw err;
    return texts.reduce((sum, t) => sum + Buffer.byteLength(t, 'utf8'), 0);
  }
}

/**
 * Each text's tokens, each bounded by `limit` (embeddings inputs, rerank documents), with the same
 * time bound and the same split between the event loop and the pool as `countTokens`. The answer
 * stops at the first text over `limit` (its entry `false`); one over `limit × 128` bytes is `false`
 * without counting.
 */
export async function countEach(profile: string | undefined, texts: string[], limit: number): Promise<Array<number | false>> {
  let bytes = 0;
  for (let i = 0; i < texts.length; i++) {
    const b = Buffer.byteLength(texts[i], 'utf8');
    if (b > limit * MAX_TOKEN_BYTES) {
      // counted only up to the text that cannot fit (the caller names the first that does not)
      const before = i > 0 ? ((await run({ profile, texts: texts.slice(0, i), limit, each: true }, bytes)) as Array<number | false>) : [];
      return before.includes(false) ? before : [...before, false];
    }
    bytes += b;
  }
  return (await run({ profile, texts, limit, each: true }, bytes)) as Array<number | false>;
}

/** Tasks sent to the pool since start (tests read it: proof that large inputs go there). */
export function tokenizerPoolRuns(): number {
  return runs;
}

async function run(task: CountTask, bytes: number, abandoned?: AbortSignal): Promise<number | false | Array<number | false>> {
  if (bytes <= INLINE_BYTES) return countInline(task);
  if (abandoned?.aborted) throw new TokenCountTimeout();
  const p = tokenizerPool();
  if (p.queueSize >= p.options.maxQueue) {
    throw new ApiError(503, 'tokenizer_busy', 'Token counting is at capacity; retry shortly.', { retryAfter: 1 });
  }
  runs++;
  try {
    const timeout = AbortSignal.timeout(config().tokenCountTimeoutMs);
    return (await p.run(task, { signal: abandoned ? AbortSignal.any([timeout, abandoned]) : timeout })) as number | false | Array<number | false>;
  } catch (err) {
    if ((err as { name?: string }).name === 'AbortError' || (err as { name?: string }).name === 'TimeoutError') throw new TokenCountTimeout();
    throw err;
  }
}
