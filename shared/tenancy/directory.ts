import type { RedisClient } from '../redis/connection';
import { flushAfterQueuedImmediates } from '../redis/cork';
import { LRUCache } from 'lru-cache';
import { Op } from 'sequelize';
import { config } from '../config/env';
import { ApiKey, Organization, Plan, Project, RoutingPlan, User } from '../db/models';
import { readEpoch } from '../cache/epoch';
import { ttlOptions } from '../cache/ttl-resolution';
import { keys } from '../redis/keys';
import type { Entitlements, LaneLimits } from '../db/models/Plan';
import type { QueueName } from '../queues/names';
import { loadQueueSettings, type QueueSettings } from '../queues/scheduler-settings';
import { isUuid } from '../uuid';
import { keyMember } from './members';
import { budgetOf, keyControls, type Budget, type KeyControls } from '../limits/controls';

export interface KeyRecord {
  id: string;
  orgId: string;
  projectId: string | null;
  /** The member the key belongs to (`gateway key create --user`), else null. */
  userId: string | null;
  revoked: boolean;
  /** The key's member has left the org or was deleted: the key no longer authenticates. */
  memberGone: boolean;
  /** The project the key is bound to is archived: the key no longer authenticates (as an archived OpenAI project's keys). */
  projectArchived: boolean;
  /** The owner's controls on the key (issue 31; docs/keys.md), with its member's limits (`controls.member`). */
  controls: KeyControls;
  /** The hash was the key's previous secret (rotated): it works until this instant. */
  previousUntil: Date | null;
}

export interface OrgContext {
  id: string;
  name: string;
  planName: string | null;
  /** Plan lane counts with the org's overrides applied. */
  laneLimits: LaneLimits;
  /** Plan entitlements with the org's overrides applied. */
  entitlements: Entitlements;
  policies: Record<string, unknown>;
}

/** Lane counts when neither the plan nor the org says otherwise. */
export const DEFAULT_LANE_LIMITS: LaneLimits = {
  'chat:interactive': 16,
  'chat:background': 8,
};

type Loader<T> = () => Promise<T>;

/** The aliases of a request without a routing plan: none (no prototype either, see `aliasMap`). */
export const NO_ALIASES: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

/**
 * A routing plan's aliases with own keys only (no prototype), built once when the plan is loaded:
 * every route looks aliases up with `modelMap[requested]`, and on a plain object
 * `modelMap['constructor']` (or `toString`, `__proto__`, ...) found Object.prototype's function
 * instead of "no alias", which crashed model resolution with a 500. Non-string values are dropped for
 * the same reason.
 */
function aliasMap(map: Record<string, unknown> | null | undefined): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [alias, target] of Object.entries(map ?? {})) if (typeof target === 'string') out[alias] = target;
  return out;
}

/** Bounds of a Directory's cache (config: CACHE_MAX_ENTRIES, CACHE_MAX_AGE_MS, CACHE_NEGATIVE_TTL_MS). */
export interface DirectoryLimits {
  maxEntries: number;
  /** No entry is older than this: what bounds a change whose epoch bump Redis lost. */
  maxAgeMs: number;
  /** "Unknown" (an unknown key, project id, ...) is remembered this long, so a flood of made-up values costs one query each. */
  negativeTtlMs: number;
}

/**
 * In-process cache of API keys, organizations, projects, routing plans, user policies and queue
 * settings, valid for one cache epoch (see shared/cache/epoch.ts) and at most `maxAgeMs`, bounded to
 * `maxEntries` (least recently used dropped first). Each app instance has its own.
 */
export class Directory {
  private epoch: string | undefined;
  private entries: LRUCache<string, Promise<unknown>>;
  /**
   * What was looked up and not found (an unknown key, a project that does not exist), apart from
   * `entries`, and lookups still loading: a flood of made-up values never pushes a live entry out.
   */
  private misses: LRUCache<string, Promise<unknown>>;
  private loading = new Map<string, Promise<unknown>>();
  private onInvalidate: Array<() => void> = [];
  /** True while the epoch is followed over pub/sub and known current (see `follow`). */
  private followed = false;
  private readonly limits: DirectoryLimits;

  constructor(
    private readonly redis: RedisClient,
    limits: Partial<DirectoryLimits> = {},
  ) {
    const cfg = config();
    this.limits = { maxEntries: cfg.cacheMaxEntries, maxAgeMs: cfg.cacheMaxAgeMs, negativeTtlMs: cfg.cacheNegativeTtlMs, ...limits };
    this.entries = new LRUCache({ max: this.limits.maxEntries, ...ttlOptions(this.limits.maxAgeMs) });
    this.misses = new LRUCache({ max: this.limits.maxEntries, ...ttlOptions(Math.max(1, Math.min(this.limits.negativeTtlMs, this.limits.maxAgeMs))) });
  }

  /** Entries held now, found and not found (tests check the bound). */
  get size(): number {
    return this.entries.size + this.misses.size;
  }

  /**
   * Follows the epoch on the cache channel instead of reading it on every request: a writer bumps it
   * and publishes after committing, and the message is in this pod's socket buffer before the writer
   * answers its client (`bumpEpoch`), so the next request here already sees the change (`sync` lets
   * the message be read first when both arrive in the same poll). While the
   * subscriber is not connected (and until a fresh read after it subscribes again) every request
   * reads the epoch from Redis as before, so a message lost in a reconnect cannot leave a stale cache.
   * Every (re)subscription also drops the caches: a writer whose bump failed while Redis was away
   * leaves the epoch where it was, so only forgetting makes its committed change visible.
   */
  async follow(sub: RedisClient): Promise<void> {
    const channel = keys.cacheChannel();
    // Applied even while re-subscribing: a bump announced between the read below reaching Redis and
    // its reply arriving would otherwise be missed. Dropping the caches twice is harmless.
    sub.on('smessage', (ch: string, epoch: string) => {
      if (ch === channel) this.moveTo(epoch);
    });
    const resume = async () => {
      this.followed = false;
      this.forget();
      await sub.ssubscribe(channel);
      this.moveTo(await readEpoch(this.redis));
      this.followed = sub.status === 'ready';
    };
    sub.on('close', () => (this.followed = false));
    sub.on('ready', () => void resume().catch(() => (this.followed = false)));
    await resume();
  }

  /**
   * Brings the cache up to date for a request: drops every entry when the epoch moved. Followed: a
   * cache message that became readable in the same poll as this request may not have been read yet
   * (the event loop handles ready sockets in any order), so this waits for the rest of the poll to be
   * handled (one setImmediate) instead of reading the epoch. Not followed: one GET.
   */
  async sync(): Promise<void> {
    if (this.followed) {
      return new Promise<void>((resolve) => {
        setImmediate(resolve);
        // what the request then sends (its job add) leaves in this iteration, not the next one
        flushAfterQueuedImmediates();
      });
    }
    let now: string;
    try {
      now = await readEpoch(this.redis);
    } catch (err) {
      this.forget(); // writes may commit meanwhile whose bump is lost: reload once Redis answers again
      throw err;
    }
    this.moveTo(now);
  }

  /** The epoch is unknown: the next one read, whatever its value, drops every entry. */
  private forget(): void {
    this.epoch = undefined;
  }

  private moveTo(now: string): void {
    if (now !== this.epoch) {
      this.epoch = now;
      this.entries.clear();
      this.misses.clear();
      this.loading.clear();
      for (const fn of this.onInvalidate) fn();
    }
  }

  /** Lets other caches (the catalog) share this epoch. */
  onChange(fn: () => void): void {
    this.onInvalidate.push(fn);
  }

  private cached<T>(key: string, load: Loader<T>): Promise<T> {
    const hit = this.entries.get(key) ?? this.misses.get(key) ?? this.loading.get(key);
    if (hit) return hit as Promise<T>;
    const loading = load();
    this.loading.set(key, loading);
    loading.then(
      (v) => {
        if (this.loading.get(key) !== loading) return; // the epoch moved meanwhile: not kept
        this.loading.delete(key);
        if (v !== null) this.entries.set(key, loading);
        else if (this.limits.negativeTtlMs > 0 && this.limits.maxAgeMs > 0) this.misses.set(key, loading);
      },
      () => {
        if (this.loading.get(key) === loading) this.loading.delete(key);
      },
    );
    return loading;
  }

  keyByHash(hash: string): Promise<KeyRecord | null> {
    return this.cached(`key:${hash}`, async () => {
      const k = await ApiKey.findOne({ where: { [Op.or]: [{ keyHash: hash }, { previousKeyHash: hash }] } });
      if (!k) return null;
      const previousUntil = k.keyHash === hash ? null : (k.previousExpiresAt ?? new Date(0));
      // the member's limits travel in the key's entry: the request path looks nothing else up
      const member = await keyMember(k.orgId, k.userId);
      const project = k.projectId ? await Project.findByPk(k.projectId, { attributes: ['archivedAt'] }) : null;
      return {
        id: k.id,
        orgId: k.orgId,
        projectId: k.projectId,
        userId: k.userId,
        revoked: k.revokedAt !== null,
        memberGone: member.gone,
        projectArchived: !!project?.archivedAt,
        controls: keyControls(k, member.membership),
        previousUntil,
      };
    });
  }

  org(orgId: string): Promise<OrgContext | null> {
    return this.cached(`org:${orgId}`, async () => {
      const org = await Organization.findByPk(orgId);
      if (!org) return null;
      const plan = org.planId ? await Plan.findByPk(org.planId) : null;
      return {
        id: org.id,
        name: org.name,
        planName: plan?.name ?? null,
        laneLimits: { ...DEFAULT_LANE_LIMITS, ...(plan?.laneLimits ?? {}), ...org.laneOverrides },
        entitlements: { ...(plan?.entitlements ?? {}), ...org.entitlements },
        policies: org.policies ?? {},
      };
    });
  }

  /** A project's spending limit (null when it has none or the project is gone). */
  projectBudget(projectId: string): Promise<Budget | null> {
    return this.cached(`pbudget:${projectId}`, async () => {
      const p = await Project.findByPk(projectId);
      return p ? budgetOf(p.budgetMicros, p.budgetPeriod) : null;
    });
  }

  /** A project of the org by id or slug. */
  project(orgId: string, idOrSlug: string): Promise<{ id: string } | null> {
    // a project is named by its id or its slug (slugify: at most 60 of a-z, 0-9 and -); anything else
    // (a 15 KB header) is not one, and is neither looked up nor cached
    if (!isUuid(idOrSlug) && !/^[a-z0-9-]{1,60}$/.test(idOrSlug)) return Promise.resolve(null);
    return this.cached(`project:${orgId}:${idOrSlug}`, async () => {
      const byId = isUuid(idOrSlug);
      const p = await Project.findOne({
        where: { orgId, archivedAt: null, ...(byId ? { [Op.or]: [{ id: idOrSlug }, { slug: idOrSlug }] } : { slug: idOrSlug }) },
      });
      return p ? { id: p.id } : null;
    });
  }

  routingPlan(id: string): Promise<{ id: string; orgId: string; projectId: string | null; modelMap: Record<string, string> } | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.cached(`rplan:${id}`, async () => {
      const r = await RoutingPlan.findByPk(id);
      return r ? { id: r.id, orgId: r.orgId, projectId: r.projectId, modelMap: aliasMap(r.modelMap) } : null;
    });
  }

  /**
   * Any other value valid for one cache epoch (e.g. web search settings, provider rows), loaded once
   * per epoch. Writers of what `load` reads must bump the epoch.
   */
  memo<T>(key: string, load: Loader<T>): Promise<T> {
    return this.cached(`memo:${key}`, load);
  }

  /** A live user's own policies (`users.policies`); null for an unknown or deleted user. */
  userPolicies(userId: string): Promise<Record<string, unknown> | null> {
    return this.cached(`user:${userId}`, async () => {
      const u = await User.findOne({ where: { id: userId, deletedAt: null } });
      return u ? u.policies : null;
    });
  }

  /** The operator's scheduler settings of a queue (defaults when it has no row). */
  queueSettings(queue: QueueName): Promise<QueueSettings> {
    return this.cached(`queue:${queue}`, async () => (await loadQueueSettings([queue])).get(queue)!);
  }
}
