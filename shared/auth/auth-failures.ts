import type { RedisClient } from '../redis/connection';
import { config } from '../config/env';
import { ApiError } from '../errors/ApiError';
import { keys } from '../redis/keys';
import { logger } from '../logger';

/** INCR, and start the window on the first failure: KEYS[1] counter; ARGV[1] window seconds. Returns [count, ttl]. */
const COUNT_FAILURE = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

export const tooManyAuthFailures = (retryAfter: number) =>
  new ApiError(429, 'too_many_auth_failures', 'Too many failed authentications from this address; retry later.', { retryAfter });

/**
 * Counts a failed authentication of a client IP (a fixed window of AUTH_FAILURE_WINDOW_SECONDS in
 * Redis, shared by every pod) and returns what to answer: the given 401 while the IP stays within
 * AUTH_FAILURE_LIMIT, else 429 `too_many_auth_failures` with Retry-After (the window's rest). Valid
 * credentials are never counted nor refused, so a client sharing an address with a guesser keeps
 * working. Redis unreachable: the 401 stands (guessing still costs one cached lookup per value).
 */
export async function authFailure(redis: RedisClient, ip: string | undefined, refusal: ApiError): Promise<ApiError> {
  const cfg = config();
  try {
    const [count, ttl] = (await redis.eval(COUNT_FAILURE, 1, keys.authFailures(ip ?? 'unknown'), cfg.authFailureWindowSeconds)) as [number, number];
    return count > cfg.authFailureLimit ? tooManyAuthFailures(ttl) : refusal;
  } catch (err) {
    logger.warn({ err }, 'could not count a failed authentication');
    return refusal;
  }
}
