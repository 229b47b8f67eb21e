import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';

/**
 * One counter in Redis guards every in-process cache of keys, organizations, plans and models.
 * Writers bump it after committing; readers compare it on each request (one GET) and reload
 * when it moved. That is what makes a revoked key fail on the very next request on every pod.
 */
export async function readEpoch(redis: RedisClient): Promise<string> {
  return (await redis.get(keys.cacheEpoch())) ?? '0';
}

/**
 * Moves the epoch and announces it on the cache channel (worker processes reload settings on it).
 * The channel is a sharded one in the epoch's slot, so on a cluster the subscribers are connected to
 * the very node that runs the SPUBLISH. Redis may write an SPUBLISH's own reply before the
 * subscribers' copies of the message (in the same write pass), so the EXISTS that follows (same slot,
 * so same node; a PING could go to another node) is what makes "the bump is announced" true on
 * return: Redis reads it only after that pass, so every subscribed pod has the message in its socket
 * buffer before the writer answers its own client (see `Directory.sync`).
 */
export async function bumpEpoch(redis: RedisClient): Promise<void> {
  const epoch = await redis.incr(keys.cacheEpoch());
  await redis.spublish(keys.cacheChannel(), String(epoch));
  await redis.exists(keys.cacheEpoch());
}
