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

/** Moves the epoch and announces it on the cache channel (worker processes reload settings on it). */
export async function bumpEpoch(redis: Redis): Promise<void> {
  const epoch = await redis.incr(keys.cacheEpoch());
  await redis.publish(keys.cacheChannel(), String(epoch));
}
