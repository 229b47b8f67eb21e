import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import type { UsageRecord } from './usage';

/**
 * The usage outbox: Redis streams (keys.usageOutbox(i), USAGE_OUTBOX_STREAMS of them, each in its own
 * slot) holding usage events that are not yet in Postgres. A worker adds its request's event in the same script that publishes the result, so a
 * client that got its answer always has its event in Redis; UsageDrainers (usage-drainer.ts) move
 * entries to `usage_events` and delete them. Each entry has one field, `u`: the record as JSON.
 */

/** The consumer group every UsageDrainer reads in. */
export const OUTBOX_GROUP = 'drainers';

/**
 * publish-with-usage
 * KEYS[1] usage outbox stream  KEYS[2] reply channel (sharded, same hash tag as KEYS[1])
 * ARGV[1] usage record (JSON)  ARGV[2] reply message
 * The XADD runs first: when it fails the script stops and nothing is published.
 */
export const PUBLISH_WITH_USAGE = `
redis.call('XADD', KEYS[1], '*', 'u', ARGV[1])
return redis.call('SPUBLISH', KEYS[2], ARGV[2])
`;

interface OutboxCommands {
  gwPublishWithUsage(stream: string, channel: string, usage: string, message: string): Promise<number>;
}

/** Defines the publish-with-usage script on a connection (idempotent). */
export function withOutboxCommands(redis: RedisClient): RedisClient & OutboxCommands {
  if (!('gwPublishWithUsage' in redis)) redis.defineCommand('gwPublishWithUsage', { numberOfKeys: 2, lua: PUBLISH_WITH_USAGE });
  return redis as RedisClient & OutboxCommands;
}

/**
 * Publishes `message` on the sharded reply `channel` and adds `usage` to the outbox stream paired
 * with that channel (same slot), atomically, in one round trip.
 */
export function publishWithUsage(redis: RedisClient, channel: string, message: string, usage: UsageRecord): Promise<number> {
  return withOutboxCommands(redis).gwPublishWithUsage(keys.usageOutboxFor(channel), channel, JSON.stringify(usage), message);
}

/** Adds one usage event to the outbox (a plain XADD); returns the entry id. */
export async function appendUsage(redis: RedisClient, usage: UsageRecord, stream = keys.usageOutbox()): Promise<string> {
  return (await redis.xadd(stream, '*', 'u', JSON.stringify(usage)))!;
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
