import type { RedisClient } from './connection';

interface Held {
  run: (redis: RedisClient) => Promise<unknown>;
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Commands queued during one event-loop turn are issued together when the turn ends (`setImmediate`),
 * or at once by `flush()`; the connection's cork (cork.ts) writes them in one socket write, and on a
 * cluster each goes to its slot's node. `flush()` issues what is held at once, so a command issued on
 * the same connection right after it still follows the held ones (on a cluster: a command on the same
 * slot, which goes to the same node).
 *
 * Not an ioredis pipeline: a Pipeline copies every script defined on its client onto itself (two
 * properties a script, an object in dictionary mode) and was 6-34 µs to make on the gateway's
 * connections, once a turn; the cork already gives one write (issue 29, docs/benchmark.md).
 */
export class TurnBatch {
  private held: Held[] = [];

  constructor(private readonly redis: RedisClient) {}

  /** Queues one command (`run` issues it on the client); resolves with its reply. */
  send(run: (redis: RedisClient) => Promise<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.held.push({ run, resolve, reject });
      if (this.held.length === 1) setImmediate(() => this.flush());
    });
  }

  flush(): void {
    if (this.held.length === 0) return;
    const batch = this.held;
    this.held = [];
    for (const h of batch) {
      let reply: Promise<unknown>;
      try {
        reply = h.run(this.redis);
      } catch (err) {
        h.reject(err);
        continue;
      }
      reply.then(h.resolve, h.reject);
    }
  }
}
