import { Redis, RedisOptions } from 'ioredis';
import { config } from '../config/env';

/**
 * Connections by role, as BullMQ's production guide asks: commands fail fast while Redis is away,
 * subscribers and workers wait out a disconnect.
 */
export function createRedis(role: 'command' | 'subscriber' | 'worker', url = config().redisUrl): Redis {
  const opts: RedisOptions =
    role === 'command'
      ? { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true };
  return new Redis(url, { ...opts, connectionName: `gw-${role}` });
}
