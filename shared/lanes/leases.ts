import type { RedisClient } from '../redis/connection';
import crypto from 'crypto';
import { keys } from '../redis/keys';
import { ACQUIRE_LEASE, RENEW_LEASES } from './scripts';
import { TurnBatch } from '../redis/turn-batch';

export type Lane = 'interactive' | 'background';

export interface Lease {
  key: string;
  id: string;
  /** Leases this org held in the lane before this one: the fair-share weight. */
  heldBefore: number;
  /** When this request was admitted (ms); a kept lease's id carries its first grant's time instead. */
  startedAt: number;
  /** The org's lane count it was admitted under: how long it may be kept depends on the room left. */
  limit: number;
  /** Set by the first release; a second one is ignored. */
  released?: boolean;
}

export type AcquireResult = { granted: true; lease: Lease } | { granted: false; retryAfterMs: number; held: number };

/** The custom commands defined below, as ioredis adds them at run time. */
interface LeaseCommands {
  gwAcquireLease(key: string, now: number, ttl: number, limit: number, id: string): Promise<[number, number, number, string[]?]>;
  gwRenewLeases(key: string, expiry: number, ttl: number, ...ids: string[]): Promise<number>;
}

/** A released lease this pod keeps for a moment, still counted in Redis, for the org's next request. */
interface Kept {
  id: string;
  heldBefore: number;
  grantedAt: number;
  timer: NodeJS.Timeout;
}

/** Weight of the newest duration in a lane's moving average. */
const EWMA_WEIGHT = 0.2;
/** Until a lane has a history on this pod, a slot is assumed to free within this. */
const DEFAULT_TYPICAL_MS = 1000;
/**
 * A kept slot goes back to Redis at least this often (ms after Redis granted it), so that a lowered
 * cap takes effect within about a second even for an org whose requests never stop.
 */
const KEEP_MAX_AGE_MS = 1000;
/**
 * How long a slot is kept at most when the org used more than half its lane count with it at its grant:
 * near its cap, another pod's request of the org may be refused while the slot idles here, so that
 * window stays this short; with room to spare nobody is refused and LEASE_KEEP_MS applies.
 */
const NEAR_CAP_KEEP_MS = 5;

/**
 * Lane leases: a hard per-org cap on concurrent requests per pool and lane, held in Redis so every
 * pod sees the same count. A pod renews the leases it holds; when a pod dies they expire after `ttlMs`.
 *
 * A released lease is kept by the pod for `keepMs` (LEASE_KEEP_MS) before it is freed in Redis: the
 * org's next request in the same lane on this pod takes it over without a round trip (the acquire
 * script and the release both saved). The slot stays counted in Redis the whole time, so the hard cap
 * holds across pods; for that moment another pod's request of the same org sees it taken, which
 * matters only near the cap: a slot that took the org over half its lane count is kept at most
 * NEAR_CAP_KEEP_MS.
 */
export class LeaseManager {
  /** Lease ids this pod holds in Redis per lane key (in use or kept): the ones it renews. */
  private held = new Map<string, Set<string>>();
  /** Released leases kept for the org's next request, per lane key, newest last. */
  private kept = new Map<string, Kept[]>();
  /** Recent lease durations per lane key on this pod (moving average, ms). */
  private typical = new Map<string, number>();
  private readonly releases: TurnBatch;
  private timer: NodeJS.Timeout | undefined;

  private readonly redis: RedisClient & LeaseCommands;

  constructor(
    redis: RedisClient,
    private readonly ttlMs: number,
    private readonly keepMs = 0,
  ) {
    this.redis = redis as RedisClient & LeaseCommands;
    this.releases = new TurnBatch(redis);
    redis.defineCommand('gwAcquireLease', { numberOfKeys: 1, lua: ACQUIRE_LEASE });
    redis.defineCommand('gwRenewLeases', { numberOfKeys: 1, lua: RENEW_LEASES });
    this.timer = setInterval(() => void this.renewAll().catch(() => undefined), Math.max(250, ttlMs / 3));
    this.timer.unref();
  }

  async acquire(orgId: string, pool: string, lane: Lane | string, limit: number): Promise<AcquireResult> {
    const key = keys.lease(orgId, pool, lane);
    const now = Date.now();
    const reused = this.takeKept(key, limit, now);
    if (reused) return { granted: true, lease: reused };
    // a kept slot just given back must be gone in Redis before this acquire counts (same connection, in order)
    this.releases.flush();
    const id = `${now}-${crypto.randomUUID()}`; // the acquire time leads, so a refusal can tell the oldest lease's age
    const [granted, held, wait, ids] = await this.redis.gwAcquireLease(key, now, this.ttlMs, limit, id);
    if (granted !== 1) return { granted: false, retryAfterMs: this.retryAfterMs(key, now, wait, ids ?? []), held };
    let set = this.held.get(key);
    if (!set) this.held.set(key, (set = new Set()));
    set.add(id);
    return { granted: true, lease: { key, id, heldBefore: held, startedAt: now, limit } };
  }

  /**
   * A kept lease of this lane for a new request, when one is young enough and this pod's own count
   * is within the cap (a cap lowered meanwhile is not stretched). Its fair-share weight is the
   * larger of what Redis counted at its grant and what this pod holds in use now.
   */
  private takeKept(key: string, limit: number, now: number): Lease | undefined {
    const list = this.kept.get(key);
    if (!list?.length) return undefined;
    const set = this.held.get(key)!;
    while (list.length) {
      const k = list.pop()!;
      clearTimeout(k.timer);
      if (now - k.grantedAt < KEEP_MAX_AGE_MS && set.size <= limit) {
        if (!list.length) this.kept.delete(key);
        const inUse = set.size - 1 - list.length;
        return { key, id: k.id, heldBefore: Math.max(k.heldBefore, inUse), startedAt: now, limit };
      }
      this.free(key, k.id);
    }
    this.kept.delete(key);
    return undefined;
  }

  /**
   * Frees a lease, or keeps it for `keepMs` for the org's next request. Releases are sent together
   * once per event-loop turn (one write, turn-batch.ts), after the response that ended the request has been
   * written, instead of one write per request before it.
   */
  release(lease: Lease): Promise<void> {
    if (lease.released || !this.held.get(lease.key)?.has(lease.id)) return Promise.resolve(); // already released
    lease.released = true;
    const d = Date.now() - lease.startedAt;
    const prev = this.typical.get(lease.key);
    this.typical.set(lease.key, prev === undefined ? d : prev + EWMA_WEIGHT * (d - prev));
    const grantedAt = Number(lease.id.split('-')[0]);
    if (this.keepMs > 0 && this.timer && Date.now() - grantedAt < KEEP_MAX_AGE_MS) {
      const timer = setTimeout(() => this.expireKept(lease.key, lease.id), this.keepFor(lease));
      timer.unref();
      let list = this.kept.get(lease.key);
      if (!list) this.kept.set(lease.key, (list = []));
      list.push({ id: lease.id, heldBefore: lease.heldBefore, grantedAt, timer });
      return Promise.resolve();
    }
    return this.free(lease.key, lease.id);
  }

  /** LEASE_KEEP_MS while the org used at most half its lane count with this slot; nearer its cap, NEAR_CAP_KEEP_MS at most. */
  private keepFor(lease: Lease): number {
    return (lease.heldBefore + 1) * 2 <= lease.limit ? this.keepMs : Math.min(this.keepMs, NEAR_CAP_KEEP_MS);
  }

  private expireKept(key: string, id: string): void {
    const list = this.kept.get(key);
    const at = list?.findIndex((k) => k.id === id) ?? -1;
    if (at < 0) return;
    list!.splice(at, 1);
    if (!list!.length) this.kept.delete(key);
    void this.free(key, id).catch(() => undefined);
  }

  /** Gives a slot back in Redis. */
  private free(key: string, id: string): Promise<void> {
    const set = this.held.get(key);
    if (!set?.delete(id)) return Promise.resolve();
    if (set.size === 0) this.held.delete(key);
    return this.releases.send((r) => r.zrem(key, id)).then(() => undefined);
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

  /** Leases in use on this pod now (kept ones not counted), by pool and lane (for metrics). */
  heldCounts(): Array<{ pool: string; lane: string; count: number }> {
    return [...this.held].map(([key, ids]) => {
      const [pool, lane] = key.split(':').slice(-2);
      return { pool, lane, count: ids.size - (this.kept.get(key)?.length ?? 0) };
    });
  }

  /** Stops renewing; kept leases are freed in Redis at once (in-use ones by their own release). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const [key, list] of this.kept) {
      for (const k of list) {
        clearTimeout(k.timer);
        void this.free(key, k.id).catch(() => undefined);
      }
    }
    this.kept.clear();
    this.releases.flush();
  }
}
