import crypto from 'crypto';
import type { RedisClient } from '../../../shared/redis/connection';
import { keys } from '../../../shared/redis/keys';
import { LUA_NOW_MS } from '../../../shared/redis/lua-clock';

/**
 * How long a `notifications/cancelled` whose call has not started is kept (its call's POST still
 * being read, racing the cancel's POST, or on its way to another pod), and how many one API key may
 * have kept at once (the oldest go first). A call that starts while its cancel is kept is cancelled
 * at once, and uses the cancel up.
 */
export const KEEP_MS = 10_000;
export const MAX_KEPT_PER_KEY = 64;

/** KEYS[1] the key's set; ARGV keep ms, max per key, members. Drops the expired, adds, trims to the bound. */
export const KEEP_CANCELS = `${LUA_NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local keep = tonumber(ARGV[1])
for i = 3, #ARGV do redis.call('ZADD', KEYS[1], now + keep, ARGV[i]) end
local n = redis.call('ZCARD', KEYS[1])
local max = tonumber(ARGV[2])
if n > max then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - max - 1) end
redis.call('PEXPIRE', KEYS[1], keep)
return n`;

/** KEYS[1] the key's set; ARGV[1] a member. 1 when it was kept and has not expired; removed either way. */
export const TAKE_CANCEL = `local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
${LUA_NOW_MS}
if tonumber(s) > now then return 1 end
return 0`;

type Scripted = RedisClient & {
  gwKeepCancels(key: string, ...args: Array<string | number>): Promise<number>;
  gwTakeCancel(key: string, member: string): Promise<number>;
};

function scripted(redis: RedisClient): Scripted {
  if (!('gwKeepCancels' in redis)) {
    redis.defineCommand('gwKeepCancels', { numberOfKeys: 1, lua: KEEP_CANCELS });
    redis.defineCommand('gwTakeCancel', { numberOfKeys: 1, lua: TAKE_CANCEL });
  }
  return redis as Scripted;
}

/**
 * A JSON-RPC id as the caller sent it, in JSON (1 and "1" differ), digested: what a kept cancel
 * costs does not depend on the id's length.
 */
export const memberOf = (idJson: string) => crypto.createHash('sha256').update(idJson).digest('base64url').slice(0, 22);

/** Keeps cancels of `idJsons` (one POST's, already bounded) for the key's calls that start within KEEP_MS. */
export async function keepCancels(redis: RedisClient, keyId: string, idJsons: string[]): Promise<void> {
  if (!idJsons.length) return;
  await scripted(redis).gwKeepCancels(keys.mcpKeptCancels(keyId), KEEP_MS, MAX_KEPT_PER_KEY, ...idJsons.map(memberOf));
}

/** True when a cancel of this call was kept and has not expired (it is used up either way). */
export async function takeCancel(redis: RedisClient, keyId: string, idJson: string): Promise<boolean> {
  return (await scripted(redis).gwTakeCancel(keys.mcpKeptCancels(keyId), memberOf(idJson))) === 1;
}

/** Drops kept cancels that found their call in flight on some pod (a later call reusing the id is not one they meant). */
export async function forgetCancels(redis: RedisClient, keyId: string, idJsons: string[]): Promise<void> {
  if (idJsons.length) await redis.zrem(keys.mcpKeptCancels(keyId), ...idJsons.map(memberOf));
}
