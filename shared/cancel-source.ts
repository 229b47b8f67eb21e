/**
 * What a request's or a job's code needs of a cancellation: AbortSignal has this shape, and so has a
 * CancelSource. undici takes it as `signal` too (it listens with `addEventListener` when there is one).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * The cancellation of one request (the web pod: the client went away) or one job (the worker: the
 * client cancelled, the deadline passed), with no AbortSignal until something asks for one.
 *
 * Every request and job may be cancelled, few are, and what listens is the gateway's own code and
 * undici: a list of one or two listeners does. A real AbortSignal per request costs far more than
 * its few microseconds to make (Node makes one as an EventTarget whose prototype it then sets): in
 * a process that holds one per request in flight, V8 promotes what the request's closures reach at
 * every scavenge, ended requests included (the promoted bytes a scavenge went from ~5 KB to ~115 KB
 * in a plain loop of 64 requests in flight, and the worker promoted a third of what survived;
 * issue 29, docs/benchmark.md, test/unit/foundation/cancel-source). `signal` makes one on first use,
 * for the APIs that require a real one (fetch, AbortSignal.any, the AWS SDK), and aborts it with the
 * source.
 */
export class CancelSource implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined = undefined;
  private controller: AbortController | undefined = undefined;

  /** Aborts once, with that reason; every listener runs once, then the real signal's, if one was made. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const l = this.listeners;
    this.listeners = undefined;
    if (l) for (const fn of l) fn();
    this.controller?.abort(reason);
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const l = this.listeners;
    const i = l ? l.indexOf(listener) : -1;
    if (i >= 0) l!.splice(i, 1);
  }

  /** Listeners still attached (tests). */
  get listenerCount(): number {
    return this.listeners?.length ?? 0;
  }

  /** A real AbortSignal that follows this source, made on first use (already aborted if the source is). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts (at once if it already has). */
export function sleep(ms: number, signal: CancelSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A real AbortSignal for an API that requires one: a source's own, or the signal itself. */
export function realSignal(s: CancelSignal): AbortSignal {
  return s instanceof CancelSource ? s.signal : (s as AbortSignal);
}
