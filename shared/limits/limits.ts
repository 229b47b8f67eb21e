import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import { ApiError } from '../errors/ApiError';
import { NOT_RETRYABLE } from '../errors/codes';
import { config } from '../config/env';
import type { UsageRecord } from '../metering/usage';
import type { Budget, KeyControls } from './controls';
import { merged } from '../merged';
import { RESERVE_LIMITS, SETTLE_LIMITS, UNCOUNT_LIMITS } from './limits-script';
import { budgetWindow, minuteWindow, windowTtlSeconds, type BudgetWindow } from './period';
import { ledgerSpend } from './ledger-spend';
import { usageCost, type CostPrices } from './usage-cost';

/** What one request asks of its key's, its project's and its member's limits (`controls.member`). */
export interface LimitRequest {
  orgId: string;
  keyId: string;
  projectId: string | null;
  controls: KeyControls;
  projectBudget: Budget | null;
  /** The job id: the usage event's request id, which settles the reservation. */
  requestId: string;
  /** Input tokens counted before the call (tpm). */
  inputTokens: number;
  /** The request's worst-case cost in micro-dollars. */
  worstCaseMicros: number;
  prices: CostPrices;
  /**
   * Told the key's rate-limit minute once the script decided, admitted or refused (not when neither
   * the key nor its member has `rpm` or `tpm`): the answer's rate-limit headers
   * (api/dispatch/rate-headers.ts). Where both limit a unit, the one with less left is told.
   */
  onRate?: (w: RateWindow) => void;
}

/**
 * A key's rate-limit minute as its request's admission read it: each limit the key has and what the
 * minute counted, this request included (a request refused on a limit counts its ask there, so that
 * limit has nothing left; the other limit's count is without it), and when the minute ends.
 */
export interface RateWindow {
  requests?: { limit: number; counted: number };
  tokens?: { limit: number; counted: number };
  /** The minute's end, in ms since the epoch. */
  resetsAt: number;
  msLeft: number;
}

/**
 * An admitted request's hold on its limits. `release` gives the reservation back (the request
 * failed); `settle` spends its real cost now, for work whose cost is not on a usage event (a web
 * search's charge is on the search ledger).
 */
export interface LimitHold {
  release(): Promise<void>;
  settle(costMicros: number): Promise<void>;
  /**
   * The request was refused before anything was sent (its lane was full): `release`, and its count
   * and counted input leave the minute's `rpm` and `tpm` too, so a client that retries as told does
   * not spend its rate on refusals.
   */
  refund(): Promise<void>;
}

export const NO_HOLD: LimitHold = { release: async () => undefined, settle: async () => undefined, refund: async () => undefined };

/** A reservation outlives its request by this much, waiting for its usage event to be drained. */
const RESERVATION_GRACE_MS = 10 * 60_000;

type LimitsRedis = RedisClient & {
  gwReserveLimits(...args: Array<string | number>): Promise<string[]>;
  gwSettleLimits(...args: Array<string | number>): Promise<number>;
  gwUncountLimits(...args: Array<string | number>): Promise<number>;
};

function withScripts(redis: RedisClient): LimitsRedis {
  if (!('gwReserveLimits' in redis)) {
    redis.defineCommand('gwReserveLimits', { numberOfKeys: 9, lua: RESERVE_LIMITS });
    redis.defineCommand('gwSettleLimits', { numberOfKeys: 4, lua: SETTLE_LIMITS });
    redis.defineCommand('gwUncountLimits', { numberOfKeys: 4, lua: UNCOUNT_LIMITS });
  }
  return redis as LimitsRedis;
}

/** Whether a budget holds a request of this key: its own, its project's or its member's. */
export function hasBudget(controls: KeyControls, projectBudget: Budget | null): boolean {
  return !!(controls.budget || projectBudget || controls.member?.budget);
}

/** Whether a request of this key needs the limits script at all. */
export function hasLimits(controls: KeyControls, projectBudget: Budget | null): boolean {
  const m = controls.member;
  return hasBudget(controls, projectBudget) || !!(controls.rpm || controls.tpm || (m && (m.rpm || m.tpm)));
}

/** What a kind of hold does not ask of (a later turn: no `rpm`; a search charge: no rates), on the key's limits and its member's alike. */
export function without(c: KeyControls, drop: Partial<Record<'rpm' | 'tpm' | 'budget', null>>): KeyControls {
  return (c.member ? merged(c, merged(drop, { member: merged(c.member, drop) })) : merged(c, drop)) as KeyControls;
}

/** The budget scopes: a key's, a project's, a member's (over all their keys in the org). */
export type BudgetScope = 'key' | 'project' | 'member';
const SCOPE_PREFIX = { key: 'kbud', project: 'pbud', member: 'mbud' } as const;

const budgetKey = (orgId: string, scope: BudgetScope, id: string, w: BudgetWindow) => keys.limits(orgId, `${SCOPE_PREFIX[scope]}:${id}:${w.id}`);
const reservationKeys = (orgId: string) => [keys.limits(orgId, 'res'), keys.limits(orgId, 'resx')];
const tpmKey = (orgId: string, keyId: string, minute: number) => keys.limits(orgId, `tpm:${keyId}:${minute}`);
/** A member's minute counts, over all their keys in the org (one counter each per member per minute). */
const memberMinuteKey = (orgId: string, unit: 'rpm' | 'tpm', userId: string, minute: number) => keys.limits(orgId, `m${unit}:${userId}:${minute}`);

type Counted = { limit: number; counted: number };
/** Of a key's and its member's count of one unit, the one with less left. */
const tighter = (a: Counted | undefined, b: Counted | undefined): Counted | undefined => (!a ? b : !b ? a : b.limit - b.counted < a.limit - a.counted ? b : a);
const counted = (limit: number | null, n: string, ask: number): Counted | undefined => (limit != null ? { limit, counted: Number(n) + ask } : undefined);

function usd(micros: number): string {
  return `$${(micros / 1_000_000).toFixed(micros % 10_000 === 0 ? 2 : 6).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

const WHOSE = { key: "the API key's budget", project: "the project's budget", member: "the member's budget" } as const;

function budgetExceeded(scope: BudgetScope, b: Budget, w: BudgetWindow, spent: number, reserved: number): ApiError {
  const per = b.period === 'total' ? 'in total' : `per ${b.period}`;
  const resets = w.resetsAt ? `it resets at ${w.resetsAt.toISOString()}` : 'a total budget does not reset';
  const shared = scope === 'member' ? ', shared by all the API keys of the member this key belongs to in this organization' : '';
  return new ApiError(
    402,
    'budget_exceeded',
    `This request's worst case does not fit ${WHOSE[scope]} of ${usd(b.micros)} ${per}${shared} (${usd(spent)} spent, ${usd(reserved)} reserved by requests in flight); ${resets}.`,
    { details: { limit_usd: b.micros / 1_000_000, period: b.period, resets_at: w.resetsAt?.toISOString() ?? null, scope } },
  );
}

/**
 * Seeds a budget window's hash from the ledger when Redis has none (a new window, or Redis lost it);
 * only if still missing, so a concurrent seed or reservation wins.
 */
async function seed(redis: RedisClient, key: string, scope: BudgetScope, id: string, orgId: string, w: BudgetWindow): Promise<void> {
  const spent = await ledgerSpend(scope, id, w.start, orgId);
  await redis.hsetnx(key, 'spent', String(spent));
  const ttl = windowTtlSeconds(w);
  if (ttl > 0) await redis.expire(key, ttl);
}

/**
 * The key's rate limits and its key, project and member budgets, and its member's rate limits
 * (counted over all the member's keys in the org), decided in one script call: 429
 * rate_limit_exceeded with Retry-After to the end of the minute, or 402 budget_exceeded when the
 * request's worst case does not fit beside what is spent and reserved. Admitted: counted, and its
 * worst case reserved until its usage event settles it (`settleUsage`) or `release` gives it back.
 * Either way `onRate` is told the key's rate-limit minute, from the same script call.
 */
export async function reserveLimits(redis: RedisClient, r: LimitRequest, now = new Date()): Promise<LimitHold> {
  const c = r.controls;
  if (!hasLimits(c, r.projectBudget)) return NO_HOLD;
  const rs = withScripts(redis);
  const m = c.member ?? null;
  const kw = c.budget ? budgetWindow(c.budget.period, now) : null;
  const pw = r.projectBudget ? budgetWindow(r.projectBudget.period, now) : null;
  const mw = m?.budget ? budgetWindow(m.budget.period, now) : null;
  const kKey = kw ? budgetKey(r.orgId, 'key', r.keyId, kw) : keys.limits(r.orgId, 'kbud:none');
  const pKey = pw && r.projectId ? budgetKey(r.orgId, 'project', r.projectId, pw) : keys.limits(r.orgId, 'pbud:none');
  // without a member limit its KEYS are the key's own, never touched (no string made for them)
  const mKey = mw ? budgetKey(r.orgId, 'member', m!.userId, mw) : kKey;
  const minute = minuteWindow(now.getTime());
  const [resKey, resxKey] = reservationKeys(r.orgId);
  const cost = Math.ceil(r.worstCaseMicros);
  // `u`: the member whose minute the request's later tokens join (only when the member has a tpm)
  const reservation = JSON.stringify({ k: kw ? kKey : '', p: pw ? pKey : '', m: mw ? mKey : undefined, a: cost, i: r.inputTokens, o: r.keyId, u: m?.tpm ? m.userId : undefined, pr: r.prices });
  const ttl = Math.max(kw ? windowTtlSeconds(kw, now) : -1, pw ? windowTtlSeconds(pw, now) : -1, mw ? windowTtlSeconds(mw, now) : -1);
  // this minute's counts (a refund takes the request out of them, even if it comes in the next minute)
  const [rpmCount, tpmCount] = [keys.limits(r.orgId, `rpm:${r.keyId}:${minute.id}`), tpmKey(r.orgId, r.keyId, minute.id)];
  const mrpm = m?.rpm ?? null;
  const mtpm = m?.tpm ?? null;
  const mRpmCount = mrpm != null ? memberMinuteKey(r.orgId, 'rpm', m!.userId, minute.id) : rpmCount;
  const mTpmCount = mtpm != null ? memberMinuteKey(r.orgId, 'tpm', m!.userId, minute.id) : tpmCount;
  for (let attempt = 0; attempt < 3; attempt++) {
    const [verdict, requests, tokens, mrequests, mtokens, a, b, d] = await rs.gwReserveLimits(
      kKey, pKey, rpmCount, tpmCount, resKey, resxKey, mKey, mRpmCount, mTpmCount,
      now.getTime(), cost, c.budget?.micros ?? -1, pw ? r.projectBudget!.micros : -1, c.rpm ?? -1, c.tpm ?? -1,
      r.inputTokens, minute.msLeft, ttl, r.requestId, reservation, config().requestTimeoutMs + RESERVATION_GRACE_MS,
      m?.budget?.micros ?? -1, mrpm ?? -1, mtpm ?? -1,
    );
    if (verdict !== 'cold' && r.onRate && (c.rpm != null || c.tpm != null || mrpm != null || mtpm != null)) {
      // a limit the request was refused on counts its ask: nothing left there
      const asked = (limit: 'rpm' | 'tpm', scope: 'key' | 'member', n: number) => (verdict === limit && b === scope ? n : 0);
      r.onRate({
        requests: tighter(counted(c.rpm, requests, asked('rpm', 'key', 1)), counted(mrpm, mrequests, asked('rpm', 'member', 1))),
        tokens: tighter(counted(c.tpm, tokens, asked('tpm', 'key', r.inputTokens)), counted(mtpm, mtokens, asked('tpm', 'member', r.inputTokens))),
        resetsAt: now.getTime() + minute.msLeft,
        msLeft: minute.msLeft,
      });
    }
    switch (verdict) {
      case 'cold':
        if (a === 'key') await seed(redis, kKey, 'key', r.keyId, r.orgId, kw!);
        else if (a === 'member') await seed(redis, mKey, 'member', m!.userId, r.orgId, mw!);
        else await seed(redis, pKey, 'project', r.projectId!, r.orgId, pw!);
        continue;
      case 'rpm':
      case 'tpm':
        if (b === 'member') throw rateExceeded(verdict, 'member', (verdict === 'rpm' ? mrpm : mtpm)!, r.inputTokens, Number(a));
        throw rateExceeded(verdict, 'key', (verdict === 'rpm' ? c.rpm : c.tpm)!, r.inputTokens, Number(a));
      case 'budget': {
        const [spent, reserved] = [Number(b), Number(d)];
        if (a === 'key') throw budgetExceeded('key', c.budget!, kw!, spent, reserved);
        if (a === 'member') throw budgetExceeded('member', m!.budget!, mw!, spent, reserved);
        throw budgetExceeded('project', r.projectBudget!, pw!, spent, reserved);
      }
      case 'ok': {
        let done = false;
        const end = async (cost: number) => {
          if (done) return;
          done = true;
          const w = minuteWindow();
          const keyTpm = tpmKey(r.orgId, r.keyId, w.id);
          await rs.gwSettleLimits(resKey, resxKey, keyTpm, mtpm != null ? memberMinuteKey(r.orgId, 'tpm', m!.userId, w.id) : keyTpm, r.requestId, cost, 0, w.msLeft + 1000);
        };
        return {
          release: () => end(-1),
          settle: (cost) => end(Math.max(0, Math.ceil(cost))),
          refund: async () => {
            if (done) return;
            await end(-1);
            await rs.gwUncountLimits(rpmCount, tpmCount, mRpmCount, mTpmCount, c.rpm != null ? 1 : 0, c.tpm != null ? r.inputTokens : 0, mrpm != null ? 1 : 0, mtpm != null ? r.inputTokens : 0);
          },
        };
      }
      default:
        throw new Error(`limits script answered '${verdict}'`);
    }
  }
  throw new Error('limits: budget could not be seeded');
}

/**
 * 429 rate_limit_exceeded on the key's own rate limit or its member's (over all the member's keys),
 * Retry-After to the minute's end. A request no minute can serve (its input alone over the tpm, or an
 * rpm of 0) is not retryable (the spec's retryable 429 is one with Retry-After): it carries no
 * Retry-After and `x-should-retry: false`, which the OpenAI and Anthropic SDKs obey instead of retrying
 * it in vain, and the batch runner reads to error the line instead of holding it (shared/batches/pacing.ts).
 */
export function rateExceeded(unit: 'rpm' | 'tpm', scope: 'key' | 'member', limit: number, inputTokens: number, msLeft: number): ApiError {
  const who = scope === 'key' ? 'This API key is' : 'The member this API key belongs to is';
  const over = scope === 'key' ? '' : ' (the member\'s limit, over all their API keys in this organization)';
  const never = unit === 'tpm' ? inputTokens > limit : limit < 1;
  return new ApiError(
    429,
    'rate_limit_exceeded',
    unit === 'rpm'
      ? `${who} limited to ${limit} requests per minute${over}; ${never ? 'no request can be made with it.' : 'retry when the minute ends.'}`
      : never
        ? `${who} limited to ${limit} tokens per minute${over} and this request's ${inputTokens} input tokens do not fit in any minute; shorten the request.`
        : `${who} limited to ${limit} tokens per minute${over} and this request's ${inputTokens} input tokens do not fit in this minute; retry when it ends.`,
    never ? { headers: NOT_RETRYABLE } : { retryAfter: msLeft / 1000 },
  );
}

/**
 * Settles the reservations of usage events just written to the ledger: each moves to `spent` at its
 * real cost, and the tokens beyond what was counted (output, and input over the count) join the
 * key's current minute. Events with no reservation (no limits, or released) change nothing.
 */
export async function settleUsage(redis: RedisClient, records: UsageRecord[]): Promise<void> {
  const rs = withScripts(redis);
  // a record whose pod reserved nothing is not looked for (one Redis call per request saved)
  const withKey = records.filter((u) => u.apiKeyId && !u.unreserved);
  if (!withKey.length) return;
  const found = await Promise.all(withKey.map((u) => redis.hget(keys.limits(u.orgId, 'res'), u.requestId)));
  const minute = minuteWindow();
  await Promise.all(
    withKey.map(async (u, i) => {
      const raw = found[i];
      if (!raw) return;
      const d = JSON.parse(raw) as { i: number; o: string; u?: string; pr: CostPrices };
      const [resKey, resxKey] = reservationKeys(u.orgId);
      const extraTokens = (u.outputTokens ?? 0) + Math.max(0, (u.inputTokens ?? 0) - d.i);
      const keyTpm = tpmKey(u.orgId, d.o, minute.id);
      await rs.gwSettleLimits(resKey, resxKey, keyTpm, d.u ? memberMinuteKey(u.orgId, 'tpm', d.u, minute.id) : keyTpm, u.requestId, usageCost(u, d.pr), extraTokens, minute.msLeft + 1000);
    }),
  );
}

/** A budget's figures for owners (`id`: the key, project or member's user): spent and reserved in the current window, what remains, when it resets. */
export async function budgetStatus(redis: RedisClient, orgId: string, scope: BudgetScope, id: string, b: Budget, now = new Date()) {
  const w = budgetWindow(b.period, now);
  const key = budgetKey(orgId, scope, id, w);
  const [spentRaw, reservedRaw] = await redis.hmget(key, 'spent', 'reserved');
  const spent = spentRaw === null ? await ledgerSpend(scope, id, w.start, orgId) : Number(spentRaw);
  const reserved = Math.max(0, Number(reservedRaw ?? 0));
  return {
    limit_usd: b.micros / 1_000_000,
    period: b.period,
    spent_usd: spent / 1_000_000,
    reserved_usd: reserved / 1_000_000,
    remaining_usd: Math.max(0, b.micros - spent - reserved) / 1_000_000,
    resets_at: w.resetsAt?.toISOString() ?? null,
  };
}
