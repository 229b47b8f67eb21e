/**
 * Samples this process's event loop delay: every `everyMs` a timer reports how late it fired (ms),
 * the delay a callback queued now would wait. Used by the web pod's fair reading (api/fair-read.ts)
 * and the worker's concurrency governor (workers/concurrency-governor.ts). Does not keep the process alive.
 */
export class LoopLagTicker {
  private timer?: NodeJS.Timeout;
  private last = 0;

  constructor(private readonly everyMs: number, private readonly onTick: (lagMs: number) => void) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.timer) return;
    this.last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      const lag = Math.max(0, now - this.last - this.everyMs);
      this.last = now;
      this.onTick(lag);
    }, this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * The organizations seen in the last `windowMs`: fair reading and the worker governor act only while
 * there is more than one (one organization alone has nobody to be protected from).
 */
export class RecentOrgs {
  private readonly seen = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  /** Notes `orgId` now; returns how many organizations are known (the stale ones included until `count`). */
  note(orgId: string): number {
    this.seen.set(orgId, Date.now());
    return this.seen.size;
  }

  /** Forgets those not seen within the window (except those `keep` names) and returns how many remain. */
  count(keep?: (orgId: string) => boolean): number {
    const since = Date.now() - this.windowMs;
    for (const [org, at] of this.seen) if (at < since && !keep?.(org)) this.seen.delete(org);
    return this.seen.size;
  }
}
