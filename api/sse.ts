import type { Response } from 'express';

/** Server-sent events: headers go out with the first event, and every event is flushed at once. */
export class SseWriter {
  private started = false;
  /** Corked until the end of the current tick (one uncork per tick, however many events). */
  private corked = false;
  constructor(private readonly res: Response) {}

  get isStarted(): boolean {
    return this.started;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-cache');
    this.res.setHeader('Connection', 'keep-alive');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.socket?.setNoDelay(true);
    this.res.flushHeaders();
  }

  /**
   * `data: <payload>` with an optional `event:` line. Events sent in the same tick (chunks that came
   * in one read of the reply channel) leave in one socket write; none waits past the current tick.
   */
  send(data: string, event?: string): void {
    this.start();
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(() => {
        this.corked = false;
        this.res.uncork();
      });
    }
    this.res.write(event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);
  }

  end(): void {
    this.start();
    this.res.end();
  }
}
