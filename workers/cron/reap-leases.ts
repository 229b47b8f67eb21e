import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from '../../shared/redis/connection';
import { config } from '../../shared/config/env';

/**
 * Lease sets drop expired members whenever they are touched; this sweep clears sets of orgs that
 * went quiet, so lane-use metrics and admin views never show a dead pod's leases. SCAN sees one
 * node's keys, so on a Redis Cluster every master is scanned (the ZREMRANGEBYSCORE goes through the
 * cluster connection, which routes it by the key's slot).
 */
export async function reapLeases(redis: RedisClient): Promise<number> {
  const nodes: Redis[] = isCluster(redis) ? redis.nodes('master') : [redis];
  const now = Date.now();
  let removed = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', `${config().redisPrefix}:lease:*`, 'COUNT', 500);
      cursor = next;
      for (const key of found) removed += await redis.zremrangebyscore(key, '-inf', now);
    } while (cursor !== '0');
  }
  return removed;
}
