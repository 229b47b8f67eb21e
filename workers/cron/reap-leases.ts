import type { RedisClient } from '../../shared/redis/connection';
import { config } from '../../shared/config/env';

/**
 * Lease sets drop expired members whenever they are touched; this sweep clears sets of orgs that
 * went quiet, so lane-use metrics and admin views never show a dead pod's leases.
 */
export async function reapLeases(redis: RedisClient): Promise<number> {
  const now = Date.now();
  let cursor = '0';
  let removed = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${config().redisPrefix}:lease:*`, 'COUNT', 500);
    cursor = next;
    for (const key of found) removed += await redis.zremrangebyscore(key, '-inf', now);
  } while (cursor !== '0');
  return removed;
}
