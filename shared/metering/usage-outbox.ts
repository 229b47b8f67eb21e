import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import type { UsageRecord } from './usage';
import { KEPT_RESULT_TTL_MS, withheldCheck } from '../queues/reply-store';
import type { RequestLogEntry } from './request-log';

/**
 * The usage outbox: Redis streams (keys.usageOutbox(i), USAGE_OUTBOX_STREAMS of them, each in its own
 * slot) holding usage events that are not yet in Postgres. A worker adds its request's event in the same script that publishes the result, so a
 * client that got its answer always has its event in Redis (and one whose pod gave up has none); UsageDrainers (usage-drainer.ts) move
 * entries to `usage_events` and delete them. Each entry has one field: `u`, the usage record as JSON
 * (with the request's log row in its `log`, shared/metering/request-log.ts), or `l`, a request log row
 * of a request that has no usage event (refused, failed, cancelled; written by its pod).
 */

/** The consumer group every UsageDrainer reads in. */
export const OUTBOX_GROUP = 'drainers';

/**
 * publish-with-usage: the worker's half of "billed exactly when delivered" (docs/architecture.md, Usage).
 * KEYS[1] usage outbox stream  KEYS[2] reply channel (sharded)  KEYS[3] the request's fate key
 * KEYS[4] its held-usage key  KEYS[5] its kept result  KEYS[6] the channel's epoch (all six share the
 * reply channel's hash tag, so one slot)
 * ARGV[1] usage record (JSON)  ARGV[2] reply message  ARGV[3] fate TTL (ms)  ARGV[4] held TTL (ms)
 * ARGV[5] what to keep for recovery ('': the reply message itself)  ARGV[6] its TTL (ms)
 * ARGV[7] the job's epoch when a stream's chunks are withheld, else '' (shared/queues/reply-store.ts):
 * WITHHELD, with nothing done, when they must be kept after all.
 * Returns -1 when the pod already gave up on the request (deadline, client gone): nothing is
 * published, kept or billed. Otherwise the answer is kept first (shared/queues/reply-store.ts: the
 * one copy a pod that missed the reply reads). Returns 0 when no pod listens on the reply channel (the pod died, or its
 * subscriber is reconnecting): the event is held, and billed only if a pod recovers the result
 * from the job and delivers it (claimHeldUsage). Otherwise the XADD runs first (when it fails the
 * script stops and nothing is published), then the sharded publish.
 *
 * Whether anyone listens is asked first (PUBSUB SHARDNUMSUB) only when a stream's chunks are withheld,
 * since that decides what to send. Otherwise the publish's own count answers it: no listener, and the
 * event just added is taken back out of the outbox and held instead, inside the same script, so no
 * drainer ever sees it (one command a request fewer than asking first).
 */
export const PUBLISH_WITH_USAGE = `
local listeners = ARGV[7] == '' and 1 or redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[2])[2]
${withheldCheck('KEYS[6]', 'ARGV[7]')}
if not redis.call('SET', KEYS[3], 'delivered', 'NX', 'PX', ARGV[3]) then return -1 end
redis.call('SET', KEYS[5], ARGV[5] == '' and ARGV[2] or ARGV[5], 'PX', ARGV[6])
if listeners == 0 then
  redis.call('SET', KEYS[4], ARGV[1], 'PX', ARGV[4])
  return 0
end
local entry = redis.call('XADD', KEYS[1], '*', 'u', ARGV[1])
local heard = redis.call('SPUBLISH', KEYS[2], ARGV[2])
if heard == 0 then
  redis.call('XDEL', KEYS[1], entry)
  redis.call('SET', KEYS[4], ARGV[1], 'PX', ARGV[4])
end
return heard
`;

/**
 * give-up: the pod's half. KEYS[1] fate key  ARGV[1] TTL (ms). 1 when the pod gave up first (the
 * worker will publish nothing and bill nothing), 0 when the worker already published its result.
 */
export const GIVE_UP = `
if redis.call('SET', KEYS[1], 'abandoned', 'NX', 'PX', ARGV[1]) then return 1 end
return 0
`;

/** claim-held: KEYS[1] held-usage key  KEYS[2] outbox. Moves a held event to the outbox; 1 if there was one. */
export const CLAIM_HELD = `
local u = redis.call('GET', KEYS[1])
if not u then return 0 end
redis.call('DEL', KEYS[1])
redis.call('XADD', KEYS[2], '*', 'u', u)
return 1
`;

/** A worker's fate key outlives any pod that could still be waiting for its result. */
const FATE_TTL_MS = 60_000;
/** A pod that gave up keeps its mark until no worker can still be running the job. */
const ABANDONED_TTL_MS = 15 * 60_000;
/** A held event waits this long for a pod to recover and deliver the result. */
const HELD_TTL_MS = 15 * 60_000;

interface OutboxCommands {
  gwPublishWithUsage(
    stream: string, channel: string, fate: string, held: string, kept: string, epoch: string,
    usage: string, message: string, fateTtl: number, heldTtl: number, keep: string, keptTtl: number, jobEpoch: string,
  ): Promise<number>;
  gwGiveUp(fate: string, ttl: number): Promise<number>;
  gwClaimHeld(held: string, stream: string): Promise<number>;
}

/** Defines the outbox scripts on a connection (idempotent). */
export function withOutboxCommands(redis: RedisClient): RedisClient & OutboxCommands {
  if (!('gwPublishWithUsage' in redis)) {
    redis.defineCommand('gwPublishWithUsage', { numberOfKeys: 6, lua: PUBLISH_WITH_USAGE });
    redis.defineCommand('gwGiveUp', { numberOfKeys: 1, lua: GIVE_UP });
    redis.defineCommand('gwClaimHeld', { numberOfKeys: 2, lua: CLAIM_HELD });
  }
  return redis as RedisClient & OutboxCommands;
}

/**
 * Publishes `message` on the sharded reply `channel` and adds `usage` to the outbox stream paired
 * with that channel (same slot), atomically, in one round trip, unless the pod gave up on the
 * request (-1) or no pod listens (0, usage held). See the script.
 */
export function publishWithUsage(redis: RedisClient, channel: string, message: string, usage: UsageRecord, keep = '', jobEpoch = ''): Promise<number> {
  return withOutboxCommands(redis).gwPublishWithUsage(
    keys.usageOutboxFor(channel),
    channel,
    keys.usageFate(channel, usage.requestId),
    keys.usageHeld(channel, usage.requestId),
    keys.replyResult(channel, usage.requestId),
    keys.replyEpoch(channel),
    JSON.stringify(usage),
    message,
    FATE_TTL_MS,
    HELD_TTL_MS,
    keep,
    KEPT_RESULT_TTL_MS,
    jobEpoch,
  );
}

/**
 * The pod stops waiting for a request (deadline, client gone). True: it gave up first and the
 * request will not be billed. False: the worker already published the result with its usage, so
 * the pod should deliver that result rather than an error. `replyTo`: the request's reply channel.
 */
export async function giveUp(redis: RedisClient, replyTo: string, requestId: string): Promise<boolean> {
  return (await withOutboxCommands(redis).gwGiveUp(keys.usageFate(replyTo, requestId), ABANDONED_TTL_MS)) === 1;
}

/**
 * The worker's half of the race for a charge made outside Redis (a decision's wallet settle, in
 * Postgres): marks the request delivered before charging, as the publishing script does before
 * billing. False when the pod already gave up on it (deadline, client gone): charge nothing. True:
 * the pod, reaching its deadline now, waits for this result and delivers it.
 */
export async function claimDelivery(redis: RedisClient, replyTo: string, requestId: string): Promise<boolean> {
  return (await redis.set(keys.usageFate(replyTo, requestId), 'delivered', 'PX', FATE_TTL_MS, 'NX')) === 'OK';
}

/**
 * After the client left: whether the worker had already claimed the request's delivery, so it settles
 * (or releases) a charge made outside Redis itself, and the pod must not release it under it. When
 * neither side had decided yet (the abort's own give-up not landed), the pod gives up here: false.
 */
export async function deliveryClaimed(redis: RedisClient, replyTo: string, requestId: string): Promise<boolean> {
  if (await giveUp(redis, replyTo, requestId)) return false;
  return (await redis.get(keys.usageFate(replyTo, requestId))) === 'delivered';
}

/** A pod delivers a result it recovered from the job: the event held for it (if any) is billed now. */
export async function claimHeldUsage(redis: RedisClient, replyTo: string, requestId: string): Promise<boolean> {
  return (await withOutboxCommands(redis).gwClaimHeld(keys.usageHeld(replyTo, requestId), keys.usageOutboxFor(replyTo))) === 1;
}

/** Adds one usage event to the outbox (a plain XADD); returns the entry id. */
export async function appendUsage(redis: RedisClient, usage: UsageRecord, stream = keys.usageOutbox()): Promise<string> {
  return (await redis.xadd(stream, '*', 'u', JSON.stringify(usage)))!;
}

/** Adds a log-only entry (a request without a usage event) to the outbox; returns the entry id. */
export async function appendRequestLog(redis: RedisClient, entry: RequestLogEntry, stream = keys.usageOutbox()): Promise<string> {
  return (await redis.xadd(stream, '*', 'l', JSON.stringify(entry)))!;
}

const optionalString = (v: unknown) => v === null || typeof v === 'string';
const optionalNumber = (v: unknown) => v === undefined || typeof v === 'number';

/** The record of an entry's `u` field, or undefined when it is not one (never retried: dead-lettered). */
export function decodeUsage(raw: string | undefined): UsageRecord | undefined {
  let u: Partial<UsageRecord>;
  try {
    u = JSON.parse(raw ?? '');
  } catch {
    return undefined;
  }
  if (!u || typeof u !== 'object') return undefined;
  const ok =
    typeof u.requestId === 'string' && u.requestId.length > 0 &&
    typeof u.orgId === 'string' && typeof u.model === 'string' && typeof u.modality === 'string' &&
    optionalString(u.projectId) && optionalString(u.apiKeyId) && optionalString(u.lane) &&
    optionalNumber(u.inputTokens) && optionalNumber(u.outputTokens) &&
    (u.units === undefined || (typeof u.units === 'object' && u.units !== null && !Array.isArray(u.units))) &&
    (u.passthrough === undefined || typeof u.passthrough === 'boolean');
  return ok ? (u as UsageRecord) : undefined;
}

export interface OutboxStats {
  /** Entries not yet in Postgres (delivered to a drainer or not). */
  entries: number;
  /** Entries a drainer has read and not yet acknowledged. */
  pending: number;
  /** Age of the oldest entry, 0 when the outbox is empty. */
  oldestAgeSeconds: number;
  deadLetters: number;
}

/**
 * The outbox's backlog, for the metrics gauges and the tests: of one stream when given, else of every
 * stream together (entries, pending and dead letters added up, the oldest entry of all).
 */
export async function outboxStats(redis: RedisClient, stream?: string, deadLetters?: string): Promise<OutboxStats> {
  if (stream) return streamStats(redis, stream, deadLetters ?? keys.usageDeadLetters());
  const all = await Promise.all(keys.usageStreams().map((s) => streamStats(redis, s.stream, s.deadLetters)));
  return all.reduce((a, b) => ({
    entries: a.entries + b.entries,
    pending: a.pending + b.pending,
    oldestAgeSeconds: Math.max(a.oldestAgeSeconds, b.oldestAgeSeconds),
    deadLetters: a.deadLetters + b.deadLetters,
  }));
}

/** One stream's backlog; one MULTI (the stream and its dead letters share a slot). */
async function streamStats(redis: RedisClient, stream: string, deadLetters: string): Promise<OutboxStats> {
  const [[, entries], [, pending], [, first], [, dead]] = (await redis
    .multi()
    .xlen(stream)
    .xpending(stream, OUTBOX_GROUP)
    .xrange(stream, '-', '+', 'COUNT', 1)
    .xlen(deadLetters)
    .exec()) as Array<[Error | null, unknown]>;
  // XPENDING fails (NOGROUP) before the first drainer created the group
  const pendingCount = Array.isArray(pending) ? Number(pending[0]) : 0;
  const oldest = (first as Array<[string, string[]]> | null)?.[0]?.[0];
  const oldestAgeSeconds = oldest ? Math.max(0, (Date.now() - Number(oldest.split('-')[0])) / 1000) : 0;
  return { entries: Number(entries ?? 0), pending: pendingCount, oldestAgeSeconds, deadLetters: Number(dead ?? 0) };
}
