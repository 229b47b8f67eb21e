import { randomBytes } from 'crypto';
import type { RedisClient } from '../redis/connection';
import { fn, col, Op } from 'sequelize';
import { keys } from '../redis/keys';
import { SearchUsage } from '../db/models';
import { SEARCH_GATE, SEARCH_RELEASE, SEARCH_RELEASE_HELD, SEARCH_SETTLE_HELD } from './gate-script';
import { periodEnd, periodOf } from './period';
import { searchErrors } from './errors';
import { dropReservation, holdReservation, periodCounts, type HeldSearch } from './reservations';
import type { ChargeClass } from './types';

/** What one decision needs to know about the org, the member and the key. */
export interface EntitlementInput {
  orgId: string;
  /** The search's id: its reservation's and, once it settles, its ledger row's. */
  requestId: string;
  /** The org's own key pays: never charged, never touches the allowance, still counted. */
  ownKey: boolean;
  allowance: number;
  overageEnabled: boolean;
  /** The org's monthly limit on all searches; null = none. */
  monthlyLimit: number | null;
  /** The member the key belongs to, with their individual cap (null = inherit the org limit). */
  member: { userId: string; cap: number | null } | null;
  /** Abuse limit: searches per org per minute; null = none. */
  perMinute: number | null;
  /**
   * A batch line's search (charged with the line's answer): counted once under its id whatever the
   * line's runners do (a marker in Redis, SEARCH_GATE), given back once (SEARCH_RELEASE_HELD).
   */
  held?: boolean;
}

export interface Reservation {
  period: string;
  chargeClass: ChargeClass;
  /** Gives the reservation back (the search failed). Safe to call once. */
  release(): Promise<void>;
  /** A held search charged with its line's answer: its marker goes, its count stays. */
  settled(): Promise<void>;
}

type GateRedis = RedisClient & {
  gwSearchGate(...args: Array<string | number>): Promise<[string, (string | number)?]>;
  gwSearchRelease(...args: Array<string | number>): Promise<number>;
  gwSearchReleaseHeld(...args: Array<string | number>): Promise<number>;
  gwSearchSettleHeld(...args: Array<string | number>): Promise<number>;
};

function withScripts(redis: RedisClient): GateRedis {
  if (!('gwSearchGate' in redis)) {
    redis.defineCommand('gwSearchGate', { numberOfKeys: 5, lua: SEARCH_GATE });
    redis.defineCommand('gwSearchRelease', { numberOfKeys: 3, lua: SEARCH_RELEASE });
    redis.defineCommand('gwSearchReleaseHeld', { numberOfKeys: 4, lua: SEARCH_RELEASE_HELD });
    redis.defineCommand('gwSearchSettleHeld', { numberOfKeys: 1, lua: SEARCH_SETTLE_HELD });
  }
  return redis as GateRedis;
}

function counterKeys(e: Pick<EntitlementInput, 'orgId' | 'member'>, period: string): [string, string, string, string] {
  const all = keys.searchCount(e.orgId, period, 'all');
  return [all, keys.searchCount(e.orgId, period, 'platform'), e.member ? keys.searchCount(e.orgId, period, `member:${e.member.userId}`) : all, keys.searchRate(e.orgId)];
}

/** Counter lifetime: to the end of the period plus a week (late releases still find them). */
function counterTtl(now: Date): number {
  return Math.ceil((periodEnd(now).getTime() - now.getTime()) / 1000) + 7 * 86400;
}

/**
 * A period's counters start from the ledger plus the searches reserved and not yet settled (a new
 * period, or Redis lost them, e.g. a failover to a lagging replica, while searches were in flight):
 * each missing one is set to that count, only if still missing (a concurrent seed wins).
 */
async function seedFromLedger(redis: RedisClient, e: EntitlementInput, period: string, ttl: number): Promise<void> {
  const [allKey, platformKey, memberKey] = counterKeys(e, period);
  const counts = await periodCounts(e.orgId, period, e.member?.userId ?? null);
  const seeds: Array<[string, number]> = [
    [allKey, counts.all],
    [platformKey, counts.platform],
  ];
  if (e.member) seeds.push([memberKey, counts.member]);
  for (const [key, n] of seeds) {
    if ((await redis.exists(key)) === 0) await redis.set(key, n, 'EX', ttl, 'NX');
  }
}

/**
 * The atomic entitlement decision (one script call): the abuse limit, the org's monthly limit, the
 * member's cap, then the allowance / overage class of a platform-key search. Admitted searches are
 * counted at once; a failed search gives its reservation back. Throws the spec's errors.
 */
export async function reserveSearch(redis: RedisClient, e: EntitlementInput, now = new Date()): Promise<Reservation> {
  const r = withScripts(redis);
  const period = periodOf(now);
  const ttl = counterTtl(now);
  const ks = counterKeys(e, period);
  const marker = e.held ? keys.searchHeld(e.orgId, e.requestId) : ks[0];
  const token = e.held ? randomBytes(9).toString('hex') : '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const [verdict, extra] = await r.gwSearchGate(
      ...ks,
      marker,
      e.ownKey ? 1 : 0,
      e.allowance,
      e.overageEnabled ? 1 : 0,
      e.monthlyLimit ?? -1,
      e.member?.cap ?? -1,
      e.member ? 1 : 0,
      ttl,
      e.perMinute ?? -1,
      token,
    );
    switch (verdict) {
      case 'cold':
        await seedFromLedger(redis, e, period, ttl);
        continue;
      case 'rate':
        throw searchErrors.rateLimited(Number(extra ?? 1));
      case 'limit':
        throw searchErrors.quotaExceeded("The organization's monthly search limit is used up for this period.", periodEnd(now));
      case 'cap':
        throw searchErrors.quotaExceeded('Your personal monthly search cap is used up for this period.', periodEnd(now));
      case 'allowance':
        throw searchErrors.quotaExceeded(
          e.allowance > 0
            ? "The organization's free search allowance is used up for this period and paid overage is off."
            : 'The organization has no search allowance and has not opted in to paid overage.',
          periodEnd(now),
        );
      case 'ok': {
        // Held in Postgres until it settles: a rebuild of the counters counts it (seedFromLedger).
        await holdReservation({ requestId: e.requestId, orgId: e.orgId, userId: e.member?.userId ?? null, period, keySource: e.ownKey ? 'own' : 'platform' });
        let released = false;
        return {
          period,
          chargeClass: extra as ChargeClass,
          release: async () => {
            if (released) return;
            released = true;
            if (e.held) await r.gwSearchReleaseHeld(ks[0], ks[1], ks[2], marker, e.ownKey ? 1 : 0, e.member ? 1 : 0, token);
            else await r.gwSearchRelease(ks[0], ks[1], ks[2], e.ownKey ? 1 : 0, e.member ? 1 : 0);
            await dropReservation(e.requestId);
          },
          settled: async () => {
            if (e.held) await r.gwSearchSettleHeld(marker, token);
          },
        };
      }
      default:
        throw new Error(`search gate answered '${verdict}'`);
    }
  }
  throw new Error('search gate: counters could not be seeded');
}

/**
 * Gives back batch lines' searches a dead runner reserved and never charged nor gave back (their
 * reservation rows, taken out of Postgres by the caller: shared/batches/store.ts leftSearches). Each
 * is given back once (its held marker; a search whose marker is gone, given back or charged
 * already, is left as it is). Returns how many went back.
 */
export async function releaseLeftSearches(redis: RedisClient, left: HeldSearch[]): Promise<number> {
  const r = withScripts(redis);
  let n = 0;
  for (const h of left) {
    const ks = counterKeys({ orgId: h.orgId, member: h.userId ? { userId: h.userId, cap: null } : null }, h.period);
    n += await r.gwSearchReleaseHeld(ks[0], ks[1], ks[2], keys.searchHeld(h.orgId, h.requestId), h.keySource === 'own' ? 1 : 0, h.userId ? 1 : 0, '');
  }
  return n;
}

/** Ledger counts of an org's period (for settings pages and the CLI). */
export async function periodUsage(orgId: string, period = periodOf()): Promise<{ total: number; platform: number; overage: number; overageMicros: number }> {
  const rows = (await SearchUsage.findAll({
    attributes: ['chargeClass', 'keySource', [fn('COUNT', col('id')), 'n'], [fn('COALESCE', fn('SUM', col('price_micros')), 0), 'micros']],
    where: { orgId, period: { [Op.eq]: period } },
    group: ['chargeClass', 'keySource'],
    raw: true,
  })) as unknown as Array<{ chargeClass: string; keySource: string; n: string; micros: string }>;
  const out = { total: 0, platform: 0, overage: 0, overageMicros: 0 };
  for (const r of rows) {
    const n = Number(r.n);
    out.total += n;
    if (r.keySource === 'platform') out.platform += n;
    if (r.chargeClass === 'overage') {
      out.overage += n;
      out.overageMicros += Number(r.micros);
    }
  }
  return out;
}
