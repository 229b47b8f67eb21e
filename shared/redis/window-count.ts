import type { RedisClient } from './connection';

/** INCR, and start the window on the first count: KEYS[1] counter; ARGV[1] window seconds. Returns [count, ttl]. */
const COUNT_IN_WINDOW = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

/**
 * Counts one event in a fixed window of `seconds` (shared by every pod): the count so far, this one
 * included, and the seconds left in the window.
 */
export async function countInWindow(redis: RedisClient, key: string, seconds: number): Promise<{ count: number; ttl: number }> {
  const [count, ttl] = (await redis.eval(COUNT_IN_WINDOW, 1, key, seconds)) as [number, number];
  return { count, ttl };
}
