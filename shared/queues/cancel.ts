import type { Redis } from 'ioredis';
import { keys } from '../redis/keys';
import type { Queues } from './queues';
import type { QueueName } from './names';

/**
 * Pod side: a waiting job is removed outright; a running one (locked by a worker) cannot be, so a
 * cancel is published that the worker owning it turns into an abort of the upstream call.
 */
export async function cancelJob(redis: Redis, queues: Queues, queue: QueueName, jobId: string): Promise<void> {
  let removed = 0;
  try {
    removed = await queues.get(queue).remove(jobId);
  } catch {
    removed = 0; // locked by a worker
  }
  if (!removed) await redis.publish(keys.cancelChannel(), jobId);
}

/**
 * Worker side: one subscription per worker process. Remembers recent cancels briefly, so a cancel
 * that lands between a job becoming active and its processor starting is not lost.
 */
export class CancelListener {
  private controllers = new Map<string, AbortController>();
  private recent = new Map<string, number>();

  constructor(private readonly sub: Redis) {}

  async start(): Promise<void> {
    this.sub.on('message', (channel: string, jobId: string) => {
      if (channel !== keys.cancelChannel()) return;
      const c = this.controllers.get(jobId);
      if (c) c.abort(new Error('cancelled by client'));
      else this.remember(jobId);
    });
    await this.sub.subscribe(keys.cancelChannel());
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
