import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import { expressJobs } from '../metrics';
import { EXPRESS_QUEUES, type QueueName } from './names';
import { expressShardForJob, shardPosition } from './shards';

/**
 * Express slots (docs/scaling.md, "Express slots"). While one organization keeps every slot of a
 * queue busy, a job of another organization waits for the next job to finish, however high its
 * priority: BullMQ's worker takes the next job only when a slot frees. With jobs of seconds that wait
 * is the whole latency of a quiet organization. So a queue can have an express queue: each worker
 * process runs a few slots more on it (CHAT_EXPRESS_CONCURRENCY), and a pod sends there only the job
 * of an organization with at most EXPRESS_MAX_IN_FLIGHT (default 2) jobs in flight in the lane, this
 * one included (its lease's `heldBefore` below that number): a flooding organization's jobs never reach those
 * slots but its first few, and an organization at concurrency 1 or 2 always finds one free.
 *
 * The express slots are shared out among the pods, so that the jobs sent there never wait for one:
 * every worker process announces its slots in Redis and every pod itself (each ANNOUNCE_MS, expiring
 * after three of those), and a pod keeps at most (slots of every worker) / (pods), rounded down, of its own
 * jobs in flight there. Past its share, or before any worker announced slots, a pod sends the job to
 * the queue's shards as before, where its priority still puts it ahead of every busier organization's.
 */

/** How often workers and pods announce themselves; an announcement lasts three times that. */
export const ANNOUNCE_MS = 2000;

/**
 * express-share-2
 * KEYS[1] the express queue's workers (member `<slots>|<process id>`, score expiry)
 * KEYS[2] its pods (member pod id, score expiry)
 * ARGV[1] now (ms)  ARGV[2] this pod's expiry (ms)  ARGV[3] pod id  ARGV[4] the sets' own lifetime (ms)
 * Announces the pod; returns { the live workers' slots, the live pods }.
 */
const EXPRESS_SHARE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[4]))
local slots = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local n = tonumber(string.match(m, '^(%d+)|'))
  if n then slots = slots + n end
end
return {slots, redis.call('ZCARD', KEYS[2])}
`;

interface ShareCommands {
  gwExpressShare(workers: string, pods: string, now: number, expiry: number, podId: string, life: number): Promise<[number, number]>;
}

/** Pod side: which express queue, if any, a job goes to. */
export class ExpressShare {
  /** Per declared queue with an express queue: how many of this pod's jobs may be in flight there. */
  private readonly shares = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly redis: RedisClient & ShareCommands;

  constructor(
    redis: RedisClient,
    private readonly podId: string,
    /** The most jobs an organization may have in flight in the lane, the new one included, for it to go express (EXPRESS_MAX_IN_FLIGHT). */
    private readonly maxInFlight: number,
    private readonly announceMs = ANNOUNCE_MS,
    /** Declared queue → its express queue (a test names queues of its own). */
    private readonly expressQueues: Readonly<Record<string, string>> = EXPRESS_QUEUES,
  ) {
    this.redis = redis as RedisClient & ShareCommands;
    redis.defineCommand('gwExpressShare', { numberOfKeys: 2, lua: EXPRESS_SHARE });
  }

  /** Announces the pod and learns its shares; then again every `announceMs`. A failed round keeps the last shares. */
  async start(): Promise<void> {
    await this.refresh().catch(() => undefined);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.announceMs);
    this.timer.unref();
  }

  async refresh(): Promise<void> {
    const now = Date.now();
    await Promise.all(
      Object.entries(this.expressQueues).map(async ([queue, express]) => {
        const [slots, pods] = await this.redis.gwExpressShare(keys.express(express, 'workers'), keys.express(express, 'pods'), now, now + 3 * this.announceMs, this.podId, 6 * this.announceMs);
        this.shares.set(queue, pods > 0 ? Math.floor(slots / pods) : 0);
      }),
    );
  }

  /**
   * The express shard for job `jobId` of an organization with `heldBefore` other jobs in flight in the
   * lane, counted against this pod's share until `done`; undefined: the job goes to the queue's shards.
   */
  take(queue: QueueName, heldBefore: number, jobId: string): string | undefined {
    if (heldBefore >= this.maxInFlight) return undefined;
    const express = this.expressQueues[queue];
    if (!express) return undefined;
    const n = this.inFlight.get(queue) ?? 0;
    if (n >= (this.shares.get(queue) ?? 0)) {
      expressJobs.inc({ queue, to: 'shards' });
      return undefined;
    }
    this.inFlight.set(queue, n + 1);
    expressJobs.inc({ queue, to: 'express' });
    // the express shard the job's id picks, as its shard would be (shards.ts)
    return expressShardForJob(queue, jobId) ?? express;
  }

  /** A job `take` sent to the express queue has ended (answered, failed or given up). */
  done(queue: QueueName): void {
    this.inFlight.set(queue, Math.max(0, (this.inFlight.get(queue) ?? 0) - 1));
  }

  /** This pod's share of a queue's express slots, and how much of it is in use. */
  shareOf(queue: QueueName): { share: number; inFlight: number } {
    return { share: this.shares.get(queue) ?? 0, inFlight: this.inFlight.get(queue) ?? 0 };
  }

  /** Stops announcing and leaves the pods' set, so that the others' shares grow at their next round. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(Object.values(this.expressQueues).map((express) => this.redis.zrem(keys.express(express, 'pods'), this.podId))).catch(() => undefined);
  }
}

/**
 * The express slots of a process's BullMQ workers, per express queue (the sum over its shards' workers).
 */
export function expressSlots(workers: Array<{ name: string; concurrency: number }>): Array<{ express: string; slots: number }> {
  const slots = new Map<string, number>();
  for (const w of workers) {
    const at = shardPosition(w.name);
    const express = at?.express ? EXPRESS_QUEUES[at.queue] : undefined;
    if (express) slots.set(express, (slots.get(express) ?? 0) + w.concurrency);
  }
  return [...slots].map(([express, n]) => ({ express, slots: n }));
}

/** Worker side: announces this process's express slots (per express queue, over all its shards). */
export class ExpressAnnouncer {
  private timer: NodeJS.Timeout | undefined;
  private readonly members: Array<{ key: string; member: string }>;

  constructor(
    private readonly redis: RedisClient,
    processId: string,
    slots: Array<{ express: string; slots: number }>,
    private readonly announceMs = ANNOUNCE_MS,
  ) {
    this.members = slots.filter((x) => x.slots > 0).map((x) => ({ key: keys.express(x.express, 'workers'), member: `${x.slots}|${processId}` }));
  }

  async start(): Promise<void> {
    if (!this.members.length) return;
    await this.announce().catch(() => undefined);
    this.timer = setInterval(() => void this.announce().catch(() => undefined), this.announceMs);
    this.timer.unref();
  }

  private async announce(): Promise<void> {
    const expiry = Date.now() + 3 * this.announceMs;
    await Promise.all(this.members.map(({ key, member }) => this.redis.multi().zadd(key, expiry, member).pexpire(key, 6 * this.announceMs).exec()));
  }

  /** Withdraws the slots at once: pods stop sending express jobs here at their next round. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(this.members.map(({ key, member }) => this.redis.zrem(key, member))).catch(() => undefined);
  }
}
