/**
 * Failure and pacing knobs, set per upstream model name (or `*` for all) with `POST /_sim/knobs`.
 * They drive the reliability tests; a real upstream has none of this.
 */
export interface Knobs {
  /** Delay before the response starts. */
  delayMs?: number;
  /** Delay between streamed tokens. */
  tokenDelayMs?: number;
  /** Answer this status instead of a result... */
  status?: number;
  /** ...only this many times, then answer normally (undefined: always). */
  statusTimes?: number;
  /** Sent as Retry-After with `status`. */
  retryAfter?: number;
  /** Answer 200 with a body that is not the API's JSON. */
  malformed?: boolean;
  /** Close the connection after this many streamed chunks, without [DONE]. */
  dropAfterChunks?: number;
  /** Never answer (until the client aborts). */
  hang?: boolean;
  /** Output length in words when not echoing. */
  outputWords?: number;
  /** Decision prompts: answer with text that is not JSON, or JSON of the wrong shape. */
  badDecision?: 'not_json' | 'wrong_shape';
  /** Web search: answer this many results (0: an empty answer) instead of the requested count. */
  searchResults?: number;
  /** Ignore `logprobs: true`, as upstreams without log-probabilities do. */
  noLogprobs?: boolean;
}

export class KnobStore {
  private byModel = new Map<string, Knobs>();
  private served = new Map<string, number>();

  set(model: string, k: Knobs): void {
    this.byModel.set(model, k);
    this.served.delete(model);
  }

  reset(): void {
    this.byModel.clear();
    this.served.clear();
  }

  /** The knobs for a model; consumes one use of a limited `status`. */
  take(model: string): Knobs {
    const key = this.byModel.has(model) ? model : '*';
    const k = { ...(this.byModel.get(key) ?? {}) };
    if (k.status !== undefined && k.statusTimes !== undefined) {
      const n = this.served.get(key) ?? 0;
      if (n >= k.statusTimes) delete k.status;
      else this.served.set(key, n + 1);
    }
    return k;
  }
}
