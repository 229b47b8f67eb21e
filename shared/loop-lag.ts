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
