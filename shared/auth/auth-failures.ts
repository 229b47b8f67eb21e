import type { RedisClient } from '../redis/connection';
import { config } from '../config/env';
import { ApiError } from '../errors/ApiError';
import { keys } from '../redis/keys';
import { logger } from '../logger';
import { countInWindow } from '../redis/window-count';

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
    const { count, ttl } = await countInWindow(redis, keys.authFailures(ip ?? 'unknown'), cfg.authFailureWindowSeconds);
    return count > cfg.authFailureLimit ? tooManyAuthFailures(ttl) : refusal;
  } catch (err) {
    logger.warn({ err }, 'could not count a failed authentication');
    return refusal;
  }
}
