import { Queue } from 'bullmq';
import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import { ALL_QUEUES, type QueueName } from './names';
import type { JobData, JobResult } from './payloads';

/** One BullMQ Queue object per name per Redis connection, created lazily. */
export class Queues {
  private readonly map = new Map<QueueName, Queue>();

  constructor(private readonly connection: RedisClient) {}

  get<Q extends QueueName>(name: Q): Queue<JobData<Q>, JobResult> {
    let q = this.map.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: keys.bullPrefix(name) });
      // The connection's own listener reports an outage once (shared/redis/connection.ts); an
      // unheard 'error' here would print every failed reconnect.
      q.on('error', () => undefined);
      this.map.set(name, q);
    }
    return q as unknown as Queue<JobData<Q>, JobResult>;
  }

  /** Job counts of every declared queue, for metrics and the admin surface. */
  async counts(): Promise<Array<{ queue: string; counts: Record<string, number> }>> {
    return Promise.all(
      ALL_QUEUES.map(async (queue) => ({
        queue,
        counts: await this.get(queue).getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'),
      })),
    );
  }

  all(): Queue[] {
    return [...this.map.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((q) => q.close()));
    this.map.clear();
  }
}
