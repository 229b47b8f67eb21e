import type { ChainableCommander } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { isCluster, type RedisClient } from './connection';

interface Held {
  key: string;
  add: (p: ChainableCommander) => void;
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Commands queued during one event-loop turn go to Redis together, as one pipeline (one socket
 * write), when the turn ends. On a cluster a pipeline must stay in one slot, so there is one
 * pipeline per slot of the held commands' keys. `flush()` sends what is held at once, so a command
 * issued on the same connection right after it still follows the held ones (on a cluster: a command
 * on the same slot, which goes to the same node).
 */
export class TurnPipeline {
  private held: Held[] = [];

  constructor(private readonly redis: RedisClient) {}

  /** Queues one command on `key` (added to the pipeline by `add`); resolves with its reply. */
  send(key: string, add: (p: ChainableCommander) => void): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.held.push({ key, add, resolve, reject });
      if (this.held.length === 1) setImmediate(() => this.flush());
    });
  }

  flush(): void {
    if (this.held.length === 0) return;
    const batch = this.held;
    this.held = [];
    if (!isCluster(this.redis)) return this.exec(batch);
    const bySlot = new Map<number, Held[]>();
    for (const h of batch) {
      const slot = calculateSlot(h.key);
      const group = bySlot.get(slot);
      if (group) group.push(h);
      else bySlot.set(slot, [h]);
    }
    for (const group of bySlot.values()) this.exec(group);
  }

  private exec(batch: Held[]): void {
    const p = this.redis.pipeline();
    for (const h of batch) h.add(p);
    p.exec().then(
      (results) => batch.forEach((h, i) => (results?.[i]?.[0] ? h.reject(results[i][0]) : h.resolve(results?.[i]?.[1]))),
      (err) => batch.forEach((h) => h.reject(err)),
    );
  }
}
