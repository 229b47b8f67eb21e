import { config } from '../config/env';

/**
 * Every Redis key and channel is built here. Keys that one Lua script touches together share a
 * `{hash tag}` so a Redis Cluster places them in one slot.
 */
export const keys = {
  /** BullMQ prefix; the braces keep a queue's keys in one cluster slot. */
  bullPrefix: () => `{${config().redisPrefix}}`,
  /** Bumped on any change to keys, orgs, plans or models; caches compare it on every request. */
  cacheEpoch: () => `${config().redisPrefix}:cache:epoch`,
  /** Published after each epoch bump (see shared/cache/epoch.ts). */
  cacheChannel: () => `${config().redisPrefix}:cache:changed`,
  lease: (orgId: string, pool: string, lane: string) => `${config().redisPrefix}:lease:{${orgId}}:${pool}:${lane}`,
  replyChannel: (podId: string) => `${config().redisPrefix}:reply:{${podId}}`,
  cancelChannel: () => `${config().redisPrefix}:cancel`,
  switches: () => `${config().redisPrefix}:switches`,
  switchesChannel: () => `${config().redisPrefix}:switches:changed`,
  /** Usage outbox stream: workers add each request's usage event with its result, UsageDrainers move it to Postgres. */
  usageOutbox: () => `${config().redisPrefix}:{usage}:outbox`,
  /** Outbox entries Postgres refused on their own (kept for an operator, never retried). */
  /** Web search period counters of an org (`all`, `platform`, `member:<user id>`); one slot per org. */
  searchCount: (orgId: string, period: string, which: string) => `${config().redisPrefix}:search:{${orgId}}:${period}:${which}`,
  /** Web search abuse-limit window of an org (same slot as its counters). */
  searchRate: (orgId: string) => `${config().redisPrefix}:search:{${orgId}}:rate`,
  usageDeadLetters: () => `${config().redisPrefix}:{usage}:dead`,
};
