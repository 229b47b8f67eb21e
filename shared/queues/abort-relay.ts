/**
 * A job's abort as undici takes it without an EventTarget listener. undici accepts for `signal` an
 * object with `on`/`once`/`removeListener` (an EventEmitter's shape) as well as an AbortSignal, and
 * on an AbortSignal it adds and removes an `abort` listener per request, which Node's EventTarget
 * makes a few microseconds each (issue 29, docs/benchmark.md). The relay is that shape: a plain list,
 * fired by the job's controller when it aborts, with the same reason.
 */
export class AbortRelay {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined = undefined;

  on(_event: 'abort', fn: () => void): this {
    if (this.aborted) return this;
    (this.listeners ??= []).push(fn);
    return this;
  }

  /** Every listener runs at most once: the relay fires once. */
  once(event: 'abort', fn: () => void): this {
    return this.on(event, fn);
  }

  removeListener(_event: 'abort', fn: () => void): this {
    const l = this.listeners;
    const i = l ? l.indexOf(fn) : -1;
    if (i >= 0) l!.splice(i, 1);
    return this;
  }

  /** Listeners still attached (tests). */
  get listenerCount(): number {
    return this.listeners?.length ?? 0;
  }

  fire(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const l = this.listeners;
    this.listeners = undefined;
    if (l) for (const fn of l) fn();
  }
}

/** The relay of each job controller's signal. */
const relays = new WeakMap<AbortSignal, AbortRelay>();

/**
 * A job's AbortController whose every abort also fires its relay. The signal stays a real
 * AbortSignal for everything else (fetch, AbortSignal.any, the AWS SDK, timers).
 */
export class JobAbortController extends AbortController {
  readonly relay = new AbortRelay();

  constructor() {
    super();
    relays.set(this.signal, this.relay);
  }

  override abort(reason?: unknown): void {
    super.abort(reason);
    this.relay.fire(this.signal.reason);
  }
}

/** What to give undici for `signal`: the job's relay when the signal is a job's, else the signal. */
export function abortSourceOf(signal: AbortSignal): AbortSignal | AbortRelay {
  return relays.get(signal) ?? signal;
}
