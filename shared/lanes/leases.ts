import type { RedisClient } from '../redis/connection';
import crypto from 'crypto';
import { keys } from '../redis/keys';
import { ACQUIRE_LEASE, RENEW_LEASES } from './scripts';
import { TurnPipeline } from '../redis/turn-pipeline';

export type Lane = 'interactive' | 'background';

export interface Lease {
  key: string;
  id: string;
  /** Leases this org held in the lane before this one: the fair-share weight. */
  heldBefore: number;
}

export type AcquireResult = { granted: true; lease: Lease } | { granted: false; retryAfterMs: number; held: number };

/** The custom commands defined below, as ioredis adds them at run time. */
interface LeaseCommands {
  gwAcquireLease(key: string, now: number, ttl: number, limit: number, id: string): Promise<[number, number, number]>;
  gwRenewLeases(key: string, expiry: number, ttl: number, ...ids: string[]): Promise<number>;
}

/**
 * Lane leases: a hard per-org cap on concurrent requests per pool and lane, held in RedisClient so every
 * pod sees the same count. A pod renews the leases it holds; when a pod dies they expire after `ttlMs`.
 */
export class LeaseManager {
  private held = new Map<string, Set<string>>();
  private readonly releases: TurnPipeline;
  private timer: NodeJS.Timeout | undefined;

  private readonly redis: RedisClient & LeaseCommands;

  constructor(redis: RedisClient, private readonly ttlMs: number) {
    this.redis = redis as RedisClient & LeaseCommands;
    this.releases = new TurnPipeline(redis);
    redis.defineCommand('gwAcquireLease', { numberOfKeys: 1, lua: ACQUIRE_LEASE });
    redis.defineCommand('gwRenewLeases', { numberOfKeys: 1, lua: RENEW_LEASES });
    this.timer = setInterval(() => void this.renewAll().catch(() => undefined), Math.max(250, ttlMs / 3));
    this.timer.unref();
  }

  async acquire(orgId: string, pool: string, lane: Lane | string, limit: number): Promise<AcquireResult> {
    const key = keys.lease(orgId, pool, lane);
    const id = crypto.randomUUID();
    const [granted, held, wait] = await this.redis.gwAcquireLease(key, Date.now(), this.ttlMs, limit, id);
    if (granted !== 1) return { granted: false, retryAfterMs: Math.max(1000, Math.min(wait, 30_000)), held };
    let set = this.held.get(key);
    if (!set) this.held.set(key, (set = new Set()));
    set.add(id);
    return { granted: true, lease: { key, id, heldBefore: held } };
  }

  /**
   * Frees a lease. Releases are sent together once per event-loop turn (one pipeline), after the
   * response that ended the request has been written, instead of one write per request before it.
   */
  release(lease: Lease): Promise<void> {
    const set = this.held.get(lease.key);
    if (!set?.delete(lease.id)) return Promise.resolve(); // already released
    if (set.size === 0) this.held.delete(lease.key);
    return this.releases.send(lease.key, (p) => p.zrem(lease.key, lease.id)).then(() => undefined);
  }

  async count(orgId: string, pool: string, lane: string): Promise<number> {
    const key = keys.lease(orgId, pool, lane);
    await this.redis.zremrangebyscore(key, '-inf', Date.now());
    return this.redis.zcard(key);
  }

  private async renewAll(): Promise<void> {
    const expiry = Date.now() + this.ttlMs;
    await Promise.all([...this.held].map(([key, ids]) => this.redis.gwRenewLeases(key, expiry, this.ttlMs, ...ids)));
  }

  /** Leases this process holds now, by pool and lane (for metrics). */
  heldCounts(): Array<{ pool: string; lane: string; count: number }> {
    return [...this.held].map(([key, ids]) => {
      const [pool, lane] = key.split(':').slice(-2);
      return { pool, lane, count: ids.size };
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
