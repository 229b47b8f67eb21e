import { LRUCache } from 'lru-cache';
import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import type { Queues } from './queues';
import type { QueueName } from './names';
import { bullQueuesOf, expressShardForJob, shardForJob } from './shards';
import { CancelSource } from '../cancel-source';
import { ttlOptions } from '../cache/ttl-resolution';
import { InFlightMap } from '../in-flight-map';

/**
 * Pod side (`bullQueue`: the BullMQ queue the pod added the job to; without it, both queues a job of
 * that id can be in: the shard its id picks and the express shard it picks): a waiting job is removed outright; a running one (locked by a worker) cannot be, so a
 * cancel is published on the sharded cancel channel of the job's queue shard (in its slot), which the worker
 * owning the job turns into an abort of the upstream call.
 */
export async function cancelJob(redis: RedisClient, queues: Queues, queue: QueueName, jobId: string, bullQueue?: string): Promise<void> {
  // from the id alone (a pod that did not add the job): the shard the id picks, or the express queue
  const express = expressShardForJob(queue, jobId);
  const candidates = bullQueue ? [bullQueue] : [shardForJob(queue, jobId), ...(express ? [express] : [])];
  await Promise.all(candidates.map((name) => cancelIn(redis, queues, name, jobId)));
}

async function cancelIn(redis: RedisClient, queues: Queues, bullQueue: string, jobId: string): Promise<void> {
  let removed = 0;
  try {
    removed = await queues.get(bullQueue).remove(jobId);
  } catch {
    removed = 0; // locked by a worker
  }
  if (!removed) await redis.spublish(keys.cancelChannel(bullQueue), jobId);
}

/** How many cancels of jobs not (yet) running a worker remembers, and for how long. */
export interface RecentCancelLimits {
  max: number;
  ttlMs: number;
}

const RECENT_CANCELS: RecentCancelLimits = { max: 10_000, ttlMs: 60_000 };

/**
 * Worker side: one subscriber connection per worker process, subscribed to the cancel channels of
 * every shard of the queues it works. Remembers recent cancels briefly, so a cancel that lands between a job
 * becoming active and its processor starting is not lost. Every worker hears every cancel of its
 * queues (most are for jobs another worker runs), so that memory is an LRU bounded in size and age.
 */
export class CancelListener {
  /** Running jobs' controllers: an InFlightMap, so a finished job is not kept alive by the map's old tables (in-flight-map.ts). */
  private controllers = new InFlightMap<CancelSource>();
  private readonly recent: LRUCache<string, true>;

  constructor(
    private readonly sub: RedisClient,
    limits: RecentCancelLimits = RECENT_CANCELS,
  ) {
    this.recent = new LRUCache({ max: limits.max, ...ttlOptions(limits.ttlMs) });
  }

  async start(queues: readonly QueueName[]): Promise<void> {
    const channels = new Set(queues.flatMap((q) => bullQueuesOf(q)).map((name) => keys.cancelChannel(name)));
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
    this.recent.set(jobId, true);
  }

  /** Cancels remembered for jobs not running here (bounded by the limits). */
  get remembered(): number {
    this.recent.purgeStale();
    return this.recent.size;
  }

  /** A controller for the job; already aborted if a cancel arrived before the job started. */
  track(jobId: string): CancelSource {
    const c = new CancelSource();
    if (this.recent.delete(jobId)) c.abort(new Error('cancelled by client'));
    this.controllers.set(jobId, c);
    return c;
  }

  untrack(jobId: string): void {
    this.controllers.delete(jobId);
  }

  /** Jobs running in this process now (tracked and not yet untracked). */
  get running(): number {
    return this.controllers.size;
  }
}
