import type { ChainableCommander, Redis } from 'ioredis';

interface Held {
  add: (p: ChainableCommander) => void;
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Commands queued during one event-loop turn go to Redis together, as one pipeline (one socket
 * write), when the turn ends. `flush()` sends what is held at once, so a command issued on the same
 * connection right after it still follows the held ones.
 */
export class TurnPipeline {
  private held: Held[] = [];

  constructor(private readonly redis: Redis) {}

  /** Queues one command (added to the pipeline by `add`); resolves with its reply. */
  send(add: (p: ChainableCommander) => void): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.held.push({ add, resolve, reject });
      if (this.held.length === 1) setImmediate(() => this.flush());
    });
  }

  flush(): void {
    if (this.held.length === 0) return;
    const batch = this.held;
    this.held = [];
    const p = this.redis.pipeline();
    for (const h of batch) h.add(p);
    p.exec().then(
      (results) => batch.forEach((h, i) => (results?.[i]?.[0] ? h.reject(results[i][0]) : h.resolve(results?.[i]?.[1]))),
      (err) => batch.forEach((h) => h.reject(err)),
    );
  }
}
