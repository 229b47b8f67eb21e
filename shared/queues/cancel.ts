import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import type { Queues } from './queues';
import type { QueueName } from './names';

/**
 * Pod side: a waiting job is removed outright; a running one (locked by a worker) cannot be, so a
 * cancel is published on the queue's sharded cancel channel (in the queue's slot), which the worker
 * owning the job turns into an abort of the upstream call.
 */
export async function cancelJob(redis: RedisClient, queues: Queues, queue: QueueName, jobId: string): Promise<void> {
  let removed = 0;
  try {
    removed = await queues.get(queue).remove(jobId);
  } catch {
    removed = 0; // locked by a worker
  }
  if (!removed) await redis.spublish(keys.cancelChannel(queue), jobId);
}

/**
 * Worker side: one subscriber connection per worker process, subscribed to the cancel channels of
 * the queues it works. Remembers recent cancels briefly, so a cancel that lands between a job
 * becoming active and its processor starting is not lost.
 */
export class CancelListener {
  private controllers = new Map<string, AbortController>();
  private recent = new Map<string, number>();

  constructor(private readonly sub: RedisClient) {}

  async start(queues: readonly QueueName[]): Promise<void> {
    const channels = new Set(queues.map((q) => keys.cancelChannel(q)));
    this.sub.on('smessage', (channel: string, jobId: string) => {
      if (!channels.has(channel)) return;
      const c = this.controllers.get(jobId);
      if (c) c.abort(new Error('cancelled by client'));
      else this.remember(jobId);
    });
    // One SSUBSCRIBE per channel: on a cluster the channels live on different shards.
    await Promise.all([...channels].map((ch) => this.sub.ssubscribe(ch)));
  }

  private remember(jobId: string): void {
    const now = Date.now();
    this.recent.set(jobId, now);
    if (this.recent.size > 10_000) for (const [id, t] of this.recent) if (now - t > 60_000) this.recent.delete(id);
  }

  /** A controller for the job; already aborted if a cancel arrived before the job started. */
  track(jobId: string): AbortController {
    const c = new AbortController();
    if (this.recent.delete(jobId)) c.abort(new Error('cancelled by client'));
    this.controllers.set(jobId, c);
    return c;
  }

  untrack(jobId: string): void {
    this.controllers.delete(jobId);
  }
}
