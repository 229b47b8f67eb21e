import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { config } from '../config/env';
import { logger } from '../logger';
import { corkPerTurn } from './cork';

/**
 * A connection to single-node Redis or to a Redis Cluster (REDIS_CLUSTER_NODES). Both speak every
 * command the gateway uses; in a cluster each command, script, MULTI and pipeline must touch one
 * slot, which is what the hash tags of shared/redis/keys.ts are for.
 */
export type RedisClient = Redis | Cluster;

/**
 * `command`: a request's own commands; `producer`: the connection a pod adds jobs on; `subscriber`
 * and `worker`: pub/sub and BullMQ workers (blocking commands).
 */
export type RedisRole = 'command' | 'producer' | 'subscriber' | 'worker';

/**
 * Options by role, as BullMQ's production guide asks: commands and producers fail fast while Redis
 * is away (a producer queues nothing offline, so an enqueue during an outage is a prompt 503, not a
 * wait until the request's deadline); subscribers and workers wait out a disconnect.
 */
function roleOptions(role: RedisRole): RedisOptions {
  const opts: RedisOptions =
    role === 'command'
      ? { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false }
      : role === 'producer'
        ? { maxRetriesPerRequest: 1, enableOfflineQueue: false }
        : { maxRetriesPerRequest: null, enableOfflineQueue: true };
  return { ...opts, connectionName: `gw-${role}` };
}

/**
 * Every connection gets an error listener (without one ioredis prints "[ioredis] Unhandled error
 * event" for each refused reconnect): one warning per outage, none again until it is ready.
 */
function listenForErrors(client: RedisClient, role: RedisRole): RedisClient {
  let reported = false;
  client.on('error', (err: Error) => {
    if (reported) return;
    reported = true;
    logger.warn({ role, err: err.message }, 'redis connection error; reconnecting');
  });
  client.on('ready', () => (reported = false));
  return client;
}

/** `host:port` entries of REDIS_CLUSTER_NODES as ioredis startup nodes. */
export function parseClusterNodes(list: string[]): Array<{ host: string; port: number }> {
  return list.map((entry) => {
    const i = entry.lastIndexOf(':');
    return { host: entry.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(entry.slice(i + 1)) };
  });
}

/**
 * `cork`: the connection writes the commands of one event-loop iteration (REDIS_CORK_UNTIL) in one
 * socket write (shared/redis/cork.ts); REDIS_CORK decides where (every process by default; `workers`: createWorkerRuntime's only).
 */
export function createRedis(role: RedisRole, url = config().redisUrl, cork = config().redisCork === 'all'): RedisClient {
  const client = connect(role, url);
  if (cork) corkPerTurn(client, config().redisCorkUntil);
  return listenForErrors(client, role);
}

function connect(role: RedisRole, url: string): RedisClient {
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
