import type { Redis } from 'ioredis';
import { keys } from '../redis/keys';
import type { UsageRecord } from './usage';

/**
 * The usage outbox: one Redis stream (keys.usageOutbox) holding usage events that are not yet in
 * Postgres. A worker adds its request's event in the same script that publishes the result, so a
 * client that got its answer always has its event in Redis; UsageDrainers (usage-drainer.ts) move
 * entries to `usage_events` and delete them. Each entry has one field, `u`: the record as JSON.
 */

/** The consumer group every UsageDrainer reads in. */
export const OUTBOX_GROUP = 'drainers';

/**
 * publish-with-usage
 * KEYS[1] usage outbox stream  ARGV[1] usage record (JSON)  ARGV[2] reply channel  ARGV[3] reply message
 * The XADD runs first: when it fails the script stops and nothing is published.
 */
const PUBLISH_WITH_USAGE = `
redis.call('XADD', KEYS[1], '*', 'u', ARGV[1])
return redis.call('PUBLISH', ARGV[2], ARGV[3])
`;

interface OutboxCommands {
  gwPublishWithUsage(stream: string, usage: string, channel: string, message: string): Promise<number>;
}

/** Defines the publish-with-usage script on a connection (idempotent). */
export function withOutboxCommands(redis: Redis): Redis & OutboxCommands {
  if (!('gwPublishWithUsage' in redis)) redis.defineCommand('gwPublishWithUsage', { numberOfKeys: 1, lua: PUBLISH_WITH_USAGE });
  return redis as Redis & OutboxCommands;
}

/** Publishes `message` on `channel` and adds `usage` to the outbox, atomically, in one round trip. */
export function publishWithUsage(redis: Redis, channel: string, message: string, usage: UsageRecord): Promise<number> {
  return withOutboxCommands(redis).gwPublishWithUsage(keys.usageOutbox(), JSON.stringify(usage), channel, message);
}

/** Adds one usage event to the outbox (a plain XADD); returns the entry id. */
export async function appendUsage(redis: Redis, usage: UsageRecord, stream = keys.usageOutbox()): Promise<string> {
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

/** The outbox's backlog, for the metrics gauges and the tests. */
export async function outboxStats(redis: Redis, stream = keys.usageOutbox(), deadLetters = keys.usageDeadLetters()): Promise<OutboxStats> {
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
