import type { Queue } from 'bullmq';
import type { RedisClient } from '../../shared/redis/connection';

/** How far back in a queue's events stream to look: the tests ask right after the job finished. */
const RECENT_EVENTS = 5_000;

/**
 * The queue (shard) that completed job `id`. A completed job is removed at once
 * (shared/queues/enqueue.ts), so where a finished job ran is read from BullMQ's `completed` event,
 * which stays in the queue's events stream (trimmed to its maxLen, 10,000 by default).
 */
export async function completedIn(redis: RedisClient, queues: readonly Queue[], id: string, waitMs = 5_000): Promise<string | undefined> {
  // the worker publishes the answer inside its processor, before BullMQ's moveToFinished writes the
  // `completed` event: a client can hold the answer a moment before the event exists
  const until = Date.now() + waitMs;
  for (;;) {
    for (const q of queues) if (await completedEvent(redis, q, id)) return q.name;
    if (Date.now() >= until) return undefined;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function completedEvent(redis: RedisClient, q: Queue, id: string): Promise<boolean> {
  const entries = await redis.xrevrange(q.keys.events, '+', '-', 'COUNT', RECENT_EVENTS);
  return entries.some(([, f]: [string, string[]]) => {
    const at = (name: string) => f[f.indexOf(name) + 1];
    return f.includes('completed') && at('event') === 'completed' && at('jobId') === id;
  });
}
