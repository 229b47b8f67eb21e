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
  gwAcquireLease(key: string, now: number, ttl: number, limit: number, id: string): Promise<[number, number, number, string[]?]>;
  gwRenewLeases(key: string, expiry: number, ttl: number, ...ids: string[]): Promise<number>;
}

/**
 * Lane leases: a hard per-org cap on concurrent requests per pool and lane, held in RedisClient so every
 * pod sees the same count. A pod renews the leases it holds; when a pod dies they expire after `ttlMs`.
 */
/** Weight of the newest duration in a lane's moving average. */
const EWMA_WEIGHT = 0.2;
/** Until a lane has a history on this pod, a slot is assumed to free within this. */
const DEFAULT_TYPICAL_MS = 1000;

export class LeaseManager {
  private held = new Map<string, Set<string>>();
  /** Recent lease durations per lane key on this pod (moving average, ms). */
  private typical = new Map<string, number>();
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
    const now = Date.now();
    const id = `${now}-${crypto.randomUUID()}`; // the acquire time leads, so a refusal can tell the oldest lease's age
    const [granted, held, wait, ids] = await this.redis.gwAcquireLease(key, now, this.ttlMs, limit, id);
    if (granted !== 1) return { granted: false, retryAfterMs: this.retryAfterMs(key, now, wait, ids ?? []), held };
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
    const started = Number(lease.id.split('-')[0]);
    if (Number.isFinite(started)) {
      const d = Date.now() - started;
      const prev = this.typical.get(lease.key);
      this.typical.set(lease.key, prev === undefined ? d : prev + EWMA_WEIGHT * (d - prev));
    }
    if (set.size === 0) this.held.delete(lease.key);
    return this.releases.send(lease.key, (p) => p.zrem(lease.key, lease.id)).then(() => undefined);
  }

  /**
   * When a slot is likely to free: the lane's typical duration (moving average of leases this pod
   * released) minus the age of the oldest lease held, at least 1 s, at most when the earliest lease
   * would expire anyway; not the whole lease lifetime.
   */
  private retryAfterMs(key: string, now: number, untilExpiry: number, ids: string[]): number {
    const starts = ids.map((i) => Number(String(i).split('-')[0])).filter((n) => Number.isFinite(n) && n > 0);
    const oldestAge = starts.length ? now - Math.min(...starts) : 0;
    const typical = this.typical.get(key) ?? DEFAULT_TYPICAL_MS;
    const expected = typical - oldestAge;
    return Math.max(1000, Math.min(expected, untilExpiry > 0 ? untilExpiry : expected, 30_000));
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
