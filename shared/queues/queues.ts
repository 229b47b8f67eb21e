import { Queue, type JobType } from 'bullmq';
import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import { ALL_QUEUES, type QueueName } from './names';
import { bullQueuesOf, shardForJob } from './shards';
import type { JobData, JobResult } from './payloads';

/** One BullMQ Queue object per name (a queue or one of its shards) per Redis connection, created lazily. */
export class Queues {
  private readonly map = new Map<string, Queue>();

  constructor(private readonly connection: RedisClient) {}

  /** The BullMQ queue of that name: a declared queue (its shard 0) or a shard's name (`<queue>-<i>`). */
  get<Q extends QueueName>(name: Q | (string & {})): Queue<JobData<Q>, JobResult> {
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

  /**
   * Creates the Queue object of every BullMQ queue (each declared queue's shards and express shards)
   * and waits until each is ready. A Queue object made later, while its Redis is away, would wait for
   * Redis to come back before its first add failed (BullMQ's waitUntilReady), instead of failing fast.
   */
  async warm(): Promise<void> {
    await Promise.all(ALL_QUEUES.flatMap((queue) => this.shards(queue)).map((q) => q.waitUntilReady()));
  }

  /** The shard of `queue` that holds (or will hold) the job with this id. */
  forJob<Q extends QueueName>(queue: Q, jobId: string): Queue<JobData<Q>, JobResult> {
    return this.get<Q>(shardForJob(queue, jobId));
  }

  /** Every BullMQ queue of a queue: its shards (one for a queue that is not sharded) and its express queue (shards.ts, bullQueuesOf). */
  shards<Q extends QueueName>(queue: Q): Array<Queue<JobData<Q>, JobResult>> {
    return bullQueuesOf(queue).map((name) => this.get<Q>(name));
  }

  /** Job counts of a queue, summed over its shards and its express queue. */
  async jobCounts(queue: QueueName, ...states: JobType[]): Promise<Record<string, number>> {
    const sum: Record<string, number> = Object.fromEntries(states.map((s) => [s, 0]));
    for (const c of await Promise.all(this.shards(queue).map((q) => q.getJobCounts(...states)))) {
      for (const [state, n] of Object.entries(c)) sum[state] = (sum[state] ?? 0) + n;
    }
    return sum;
  }

  /**
   * Job counts of every declared queue (over all its shards), for metrics. No `completed`: a completed
   * job is removed at once (enqueue.ts), so that count is always 0; jobs finished are counted by
   * `gateway_job_duration_seconds`.
   */
  async counts(): Promise<Array<{ queue: string; counts: Record<string, number> }>> {
    return Promise.all(
      ALL_QUEUES.map(async (queue) => ({
        queue,
        counts: await this.jobCounts(queue, 'waiting', 'prioritized', 'active', 'delayed', 'failed'),
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
