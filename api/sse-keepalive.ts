/** Keepalive timers running in this process (each stream's, until it ends or its client leaves): the tests check that none outlives its stream. */
let live = 0;
export const liveKeepalives = (): number => live;

/**
 * Calls `ping` whenever the stream has been quiet (`quietFor()`, in ms) for `ms`, until stop(). One
 * timer per stream, set again only when it fires (at most once per `ms`), so a busy stream's writes
 * cost it nothing but the writer's note of the time.
 */
export class Keepalive {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly quietFor: () => number,
    private readonly ping: () => void,
  ) {
    live++;
    this.timer = setTimeout(this.check, ms);
  }

  private readonly check = (): void => {
    const quiet = this.quietFor();
    if (quiet >= this.ms) this.ping();
    // ping() may have stopped it (the client had left)
    if (this.timer) this.timer = setTimeout(this.check, quiet >= this.ms ? this.ms : this.ms - quiet);
  };

  stop(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    live--;
  }
}
