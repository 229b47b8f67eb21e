import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { config } from '../config/env';

/**
 * A connection to single-node Redis or to a Redis Cluster (REDIS_CLUSTER_NODES). Both speak every
 * command the gateway uses; in a cluster each command, script, MULTI and pipeline must touch one
 * slot, which is what the hash tags of shared/redis/keys.ts are for.
 */
export type RedisClient = Redis | Cluster;

export type RedisRole = 'command' | 'subscriber' | 'worker';

/** Options by role, as BullMQ's production guide asks: commands fail fast while Redis is away, subscribers and workers wait out a disconnect. */
function roleOptions(role: RedisRole): RedisOptions {
  const opts: RedisOptions =
    role === 'command'
      ? { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true };
  return { ...opts, connectionName: `gw-${role}` };
}

/** `host:port` entries of REDIS_CLUSTER_NODES as ioredis startup nodes. */
export function parseClusterNodes(list: string[]): Array<{ host: string; port: number }> {
  return list.map((entry) => {
    const i = entry.lastIndexOf(':');
    return { host: entry.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(entry.slice(i + 1)) };
  });
}

export function createRedis(role: RedisRole, url = config().redisUrl): RedisClient {
  const nodes = config().redisClusterNodes;
  if (nodes.length === 0) return new Redis(url, roleOptions(role));
  const { maxRetriesPerRequest, enableOfflineQueue, connectionName } = roleOptions(role);
  const opts: ClusterOptions = {
    enableOfflineQueue,
    maxRedirections: 16,
    // Sharded pub/sub (SSUBSCRIBE): one subscriber connection per shard that owns a subscribed channel.
    shardedSubscribers: role === 'subscriber',
    redisOptions: { maxRetriesPerRequest, connectionName },
  };
  return new Cluster(parseClusterNodes(nodes), opts);
}

export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}
