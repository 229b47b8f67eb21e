import type { Redis } from 'ioredis';
import { keys } from '../redis/keys';

/**
 * One counter in Redis guards every in-process cache of keys, organizations, plans and models.
 * Writers bump it after committing; readers compare it on each request (one GET) and reload
 * when it moved. That is what makes a revoked key fail on the very next request on every pod.
 */
export async function readEpoch(redis: Redis): Promise<string> {
  return (await redis.get(keys.cacheEpoch())) ?? '0';
}

/**
 * Moves the epoch and announces it on the cache channel (worker processes reload settings on it).
 * Redis may write a PUBLISH's own reply before the subscribers' copies of the message (in the same
 * write pass), so the PING that follows is what makes "the bump is announced" true on return: Redis
 * reads it only after that pass, so every subscribed pod has the message in its socket buffer before
 * the writer answers its own client (see `Directory.sync`).
 */
export async function bumpEpoch(redis: Redis): Promise<void> {
  const epoch = await redis.incr(keys.cacheEpoch());
  await redis.publish(keys.cacheChannel(), String(epoch));
  await redis.ping();
}
