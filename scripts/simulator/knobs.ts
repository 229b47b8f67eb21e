/**
 * Failure and pacing knobs, set per upstream model name (or `*` for all) with `POST /_sim/knobs`.
 * They drive the reliability tests; a real upstream has none of this.
 */
export interface Knobs {
  /** Delay before the response starts. */
  delayMs?: number;
  /**
   * Spreads `delayMs` uniformly over ± this fraction of it (0.5: 50 % to 150 %), as real upstreams'
   * times vary; with one fixed delay, requests started together finish together, in waves.
   */
  delayJitter?: number;
  /** Delay between streamed tokens. */
  tokenDelayMs?: number;
  /** Answer this status instead of a result... */
  status?: number;
  /** ...only this many times, then answer normally (undefined: always). */
  statusTimes?: number;
  /** Answer `status` only on every n-th request of this model (2: every other one), e.g. for a retry in each request. */
  statusEvery?: number;
  /** Sent as Retry-After with `status` (Gemini: a 429's RetryInfo.retryDelay in the body, as Google does). */
  retryAfter?: number;
  /** Gemini: refuse the key as Google refuses an invalid one (400 INVALID_ARGUMENT, reason API_KEY_INVALID). */
  keyInvalid?: boolean;
  /** Answer 200 with a body that is not the API's JSON. */
  malformed?: boolean;
  /** Close the connection after this many streamed chunks, without [DONE]. */
  dropAfterChunks?: number;
  /** Never answer (until the client aborts). */
  hang?: boolean;
  /**
   * Answer only once the test calls `knobs.release()` (or `POST /_sim/release`, or a reset): a
   * request that holds its lane for exactly as long as the test needs, whatever the machine's speed.
   */
  hold?: boolean;
  /** Chat and messages: answer exactly these words (e.g. text Postgres cannot store, or a JSON answer) instead of the echo. */
  replyWords?: string[];
  /**
   * Legacy completions: `max_tokens: 0` read as no limit (servers that take a falsy cap for "none"),
   * generating `outputWords` words; OpenAI's own reading (nothing generated) otherwise.
   */
  zeroCapUnlimited?: boolean;
  /** Output length in words when not echoing. */
  outputWords?: number;
  /** Decision prompts: answer with text that is not JSON, or JSON of the wrong shape. */
  badDecision?: 'not_json' | 'wrong_shape';
  /** Web search: answer this many results (0: an empty answer) instead of the requested count. */
  searchResults?: number;
  /**
   * Rerank: answer as a bare upstream does: every document's score in document order, `top_n` not
   * applied, no `meta.billed_units`, so the gateway's own sorting, top_n and unit count show.
   */
  bareRerank?: boolean;
  /**
   * Images: a well-formed answer in which every image from this index on (0: all of them) is bytes
   * that are not an image, so the gateway's own check of the bytes runs.
   */
  nonImageFrom?: number;
  /**
   * Images: answer every image as a link to this URL (a `url` item, as dall-e models answer
   * `response_format: url`) instead of its bytes, whatever the request asked; `'self'` links each
   * drawn image on the simulator itself (http, the upstream's own origin).
   */
  imageUrl?: string;
  /** Ignore `logprobs: true`, as upstreams without log-probabilities do. */
  noLogprobs?: boolean;
  /** Chat: answer with this reasoning text under this field (DeepSeek's `reasoning_content`, OpenRouter's `reasoning`). */
  reasoning?: { field: 'reasoning' | 'reasoning_content'; text: string };
  /** Chat streams: usage rides on the finishing chunk whatever `stream_options` says (Mistral, Together, OpenRouter). */
  usageInLastChunk?: boolean;
  /**
   * Chat streams: every event, `[DONE]` included, in one write (as the peer harness's stub sends a
   * stream), so the gateway reads them in one read; `tokenDelayMs` and `dropAfterChunks` do not apply.
   */
  oneWrite?: boolean;
  /** Gemini: function calls carry an `id` (`functionCall.id`), as newer Gemini models send. */
  callIds?: boolean;
  /** Chat (decision answers included) and messages: fields added to `usage` (e.g. DeepSeek's `prompt_cache_hit_tokens`, Anthropic's `cache_read_input_tokens`). */
  usageExtra?: Record<string, unknown>;
  /** Chat: the `service_tier` a request that set one is answered with, instead of the tier asked (a project without access to it is served `default`). */
  servedTier?: string;
  /**
   * Chat: the tier the OpenAI project is configured with, which serves a request without `service_tier`
   * or with `auto` ("processed with the service tier configured in the Project settings": OpenAI's API
   * document, ServiceTier), named on its answer and chunks as OpenAI's answers name the tier used.
   */
  projectTier?: string;
}

/** What `take` hands a route: the knobs, and for `hold` the promise that lets the answer go. */
export type TakenKnobs = Knobs & { released?: Promise<void> };

export class KnobStore {
  private byModel = new Map<string, Knobs>();
  private served = new Map<string, number>();
  private gate = KnobStore.newGate();

  private static newGate(): { promise: Promise<void>; open(): void } {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    return { promise, open };
  }

  /** Lets every request held by `hold` answer; later held requests wait for the next release. */
  release(): void {
    this.gate.open();
    this.gate = KnobStore.newGate();
  }

  set(model: string, k: Knobs): void {
    this.byModel.set(model, k);
    this.served.delete(model);
  }

  reset(): void {
    this.byModel.clear();
    this.served.clear();
    this.release();
  }

  /** The knobs for a model; consumes one use of a limited `status`. */
  take(model: string): TakenKnobs {
    const key = this.byModel.has(model) ? model : '*';
    const k: TakenKnobs = { ...(this.byModel.get(key) ?? {}) };
    if (k.hold) k.released = this.gate.promise;
    if (k.status !== undefined && k.statusEvery !== undefined) {
      const n = (this.served.get(key) ?? 0) + 1;
      this.served.set(key, n);
      if (n % k.statusEvery !== 0) delete k.status;
    } else if (k.status !== undefined && k.statusTimes !== undefined) {
      const n = this.served.get(key) ?? 0;
      if (n >= k.statusTimes) delete k.status;
      else this.served.set(key, n + 1);
    }
    return k;
  }
}
