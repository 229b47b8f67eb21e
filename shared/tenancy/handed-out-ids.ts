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
 * expire dropped first. Beside it, in the org's slot, the workspace each id was made in (the provider
 * whose credential the answering deployment used): a pool may hold deployments of several
 * workspaces, and a request naming the id is routed only to that workspace's
 * (api/dispatch/route.ts pinned). Lost (a Redis without its data), an id is refused as any other: the client
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
 * KEYS[1] the org's set, KEYS[2] its workspaces (a hash: member to the id of the provider, the
 * credential's holder, whose workspace made it); ARGV[1] the most kept, ARGV[2] that provider's id
 * ('' records none), then pairs (keep ms, member). Drops the expired, adds or extends (never
 * shortens: GT), trims to the bound (soonest expiry first), drops the workspaces of what left the set
 * (and of what an older worker's script dropped: fields beyond the set's members), and lets both keys
 * expire with the set's last member.
 */
export const RECORD_IDS = `${LUA_NOW_MS}
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, m in ipairs(gone) do redis.call('HDEL', KEYS[2], m) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 3, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], 'GT', now + tonumber(ARGV[i]), ARGV[i + 1])
  if ARGV[2] ~= '' then redis.call('HSET', KEYS[2], ARGV[i + 1], ARGV[2]) end
end
local n = redis.call('ZCARD', KEYS[1])
local max = tonumber(ARGV[1])
if n > max then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, n - max - 1)) do redis.call('HDEL', KEYS[2], m) end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - max - 1)
end
if redis.call('HLEN', KEYS[2]) > redis.call('ZCARD', KEYS[1]) then
  for _, m in ipairs(redis.call('HKEYS', KEYS[2])) do
    if not redis.call('ZSCORE', KEYS[1], m) then redis.call('HDEL', KEYS[2], m) end
  end
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  local at = string.format('%d', math.ceil(tonumber(last[2])))
  redis.call('PEXPIREAT', KEYS[1], at)
  redis.call('PEXPIREAT', KEYS[2], at)
end
return n`;

/**
 * KEYS[1] the org's set, KEYS[2] its workspaces; ARGV members. Per member 0 when not kept (or
 * expired), else the id of the provider whose workspace made it, or 1 when none is recorded (an
 * older worker's record: any workspace, as before).
 */
export const OWNED_IDS = `${LUA_NOW_MS}
local out = {}
for i = 1, #ARGV do
  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if s and tonumber(s) > now then out[i] = redis.call('HGET', KEYS[2], ARGV[i]) or 1 else out[i] = 0 end
end
return out`;

type Scripted = RedisClient & {
  gwRecordHandedIds(set: string, workspaces: string, ...args: Array<string | number>): Promise<number>;
  gwOwnedHandedIds(set: string, workspaces: string, ...members: string[]): Promise<Array<number | string>>;
};

function scripted(redis: RedisClient): Scripted {
  if (!('gwRecordHandedIds' in redis)) {
    redis.defineCommand('gwRecordHandedIds', { numberOfKeys: 2, lua: RECORD_IDS });
    redis.defineCommand('gwOwnedHandedIds', { numberOfKeys: 2, lua: OWNED_IDS });
  }
  return redis as Scripted;
}

/**
 * Records ids one answer handed the org (one script call; none when `ids` is empty), with the
 * workspace that made them: `workspace`, the id of the provider whose credential the answering
 * deployment called with ('' or absent: none recorded, any workspace).
 */
export async function recordHandedIds(redis: RedisClient, orgId: string, ids: HandedId[], workspace = ''): Promise<void> {
  const args = ids.filter((h) => h.id.length > 0 && h.id.length <= MAX_ID_LENGTH).flatMap((h) => [Math.max(1, Math.round(h.keepMs)), member(h.kind, h.id)]);
  if (!args.length) return;
  await scripted(redis).gwRecordHandedIds(keys.handedOutIds(orgId), keys.handedOutWorkspaces(orgId), MAX_PER_ORG, workspace, ...args);
}

/**
 * Whether the gateway handed the org an id, and in which workspace: false when not (or no longer)
 * kept; else `workspace`, the id of the provider whose credential made it, or null for a record
 * made before workspaces were recorded (an older worker during a rolling deploy), which any
 * deployment may be sent, as before.
 */
export type Handed = false | { workspace: string | null };

/** For each id a request names, whether the gateway handed it to this org, still kept, and in which workspace (one script call). */
export async function ownedHandedIds(redis: RedisClient, orgId: string, named: Array<{ kind: HandedKind; id: string }>): Promise<Handed[]> {
  if (!named.length) return [];
  const members = named.map((n) => (n.id.length <= MAX_ID_LENGTH ? member(n.kind, n.id) : ''));
  const owned = await scripted(redis).gwOwnedHandedIds(keys.handedOutIds(orgId), keys.handedOutWorkspaces(orgId), ...members);
  return owned.map((o, i) => (o === 0 || members[i] === '' ? false : { workspace: typeof o === 'string' ? o : null }));
}
