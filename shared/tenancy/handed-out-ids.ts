import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import { LUA_NOW_MS } from '../redis/lua-clock';

/**
 * Ids an Anthropic-native upstream handed an organization on the platform's credential, one
 * workspace shared by every organization (docs/security.md, "Ids an upstream resolves"): the
 * native bypass refuses an id it resolves there (api/routes/messages/shared-account-ids.ts) unless
 * the gateway handed that very id to the asking organization, recorded here by the chat worker as
 * the answer passes (workers/providers/anthropic/handed-ids.ts). One sorted set per org, member
 * `<kind>:<id>`, score its expiry (ms, Redis's clock); at most MAX_PER_ORG kept, the soonest to
 * expire dropped first. Lost (a Redis without its data), an id is refused as any other: the client
 * starts a new container or sends the file again.
 */
export type HandedKind = 'container' | 'file' | 'message';

export interface HandedId {
  kind: HandedKind;
  id: string;
  /** How long the org may name it from now (ms). */
  keepMs: number;
}

/** Ids kept per organization: a few hundred kilobytes at most. */
export const MAX_PER_ORG = 5000;
/** A longer id is never recorded, so never passes (Anthropic's are about 30 characters). */
export const MAX_ID_LENGTH = 200;

const member = (kind: HandedKind, id: string) => `${kind[0]}:${id}`;

/**
 * KEYS[1] the org's set; ARGV[1] the most kept, then pairs (keep ms, member). Drops the expired,
 * adds or extends (never shortens: GT), trims to the bound (soonest expiry first), and lets the set
 * expire with its last member.
 */
export const RECORD_IDS = `${LUA_NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 2, #ARGV, 2 do redis.call('ZADD', KEYS[1], 'GT', now + tonumber(ARGV[i]), ARGV[i + 1]) end
local n = redis.call('ZCARD', KEYS[1])
local max = tonumber(ARGV[1])
if n > max then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - max - 1) end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.ceil(tonumber(last[2])))) end
return n`;

/** KEYS[1] the org's set; ARGV members. Per member 1 when kept and not expired, else 0. */
export const OWNED_IDS = `${LUA_NOW_MS}
local out = {}
for i = 1, #ARGV do
  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if s and tonumber(s) > now then out[i] = 1 else out[i] = 0 end
end
return out`;

type Scripted = RedisClient & {
  gwRecordHandedIds(key: string, ...args: Array<string | number>): Promise<number>;
  gwOwnedHandedIds(key: string, ...members: string[]): Promise<number[]>;
};

function scripted(redis: RedisClient): Scripted {
  if (!('gwRecordHandedIds' in redis)) {
    redis.defineCommand('gwRecordHandedIds', { numberOfKeys: 1, lua: RECORD_IDS });
    redis.defineCommand('gwOwnedHandedIds', { numberOfKeys: 1, lua: OWNED_IDS });
  }
  return redis as Scripted;
}

/** Records ids one answer handed the org (one script call; none when `ids` is empty). */
export async function recordHandedIds(redis: RedisClient, orgId: string, ids: HandedId[]): Promise<void> {
  const args = ids.filter((h) => h.id.length > 0 && h.id.length <= MAX_ID_LENGTH).flatMap((h) => [Math.max(1, Math.round(h.keepMs)), member(h.kind, h.id)]);
  if (!args.length) return;
  await scripted(redis).gwRecordHandedIds(keys.handedOutIds(orgId), MAX_PER_ORG, ...args);
}

/** For each id a request names, whether the gateway handed it to this org and it is still kept (one script call). */
export async function ownedHandedIds(redis: RedisClient, orgId: string, named: Array<{ kind: HandedKind; id: string }>): Promise<boolean[]> {
  if (!named.length) return [];
  const members = named.map((n) => (n.id.length <= MAX_ID_LENGTH ? member(n.kind, n.id) : ''));
  const owned = await scripted(redis).gwOwnedHandedIds(keys.handedOutIds(orgId), ...members);
  return owned.map((o, i) => o === 1 && members[i] !== '');
}
