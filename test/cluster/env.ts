import type { Cluster } from 'ioredis';
import type { RedisClient } from '../../shared/redis/connection';
import type { Simulator } from '../../scripts/simulator/server';
import type { GatewayProcess } from './processes';
import { outboxStats } from '../../shared/metering/usage-outbox';
import { waitFor } from '../helpers/wait';

/** What the cluster suite's hooks start: two web pods, two chat workers, a simulator, a cluster connection. */
export interface ClusterEnv {
  redis: RedisClient;
  sim: Simulator;
  simUrl: string;
  webs: [GatewayProcess, GatewayProcess];
  workers: GatewayProcess[];
}

let current: ClusterEnv | undefined;

export function setClusterEnv(e: ClusterEnv | undefined): void {
  current = e;
}

export function clusterEnv(): ClusterEnv {
  if (!current) throw new Error('cluster environment not started (test/cluster/hooks.ts)');
  return current;
}

/** Waits until every usage event the cluster's outbox streams hold is in Postgres. */
export async function usageSettled(ms = 15_000): Promise<void> {
  const settled = await waitFor(async () => {
    const s = await outboxStats(clusterEnv().redis);
    return s.entries === 0 && s.pending === 0;
  }, ms, 20);
  if (!settled) throw new Error(`usage outbox not drained: ${JSON.stringify(await outboxStats(clusterEnv().redis))}`);
}

/** The master (host:port) serving a slot, from CLUSTER SLOTS. */
export async function ownerOf(redis: Cluster, slot: number): Promise<string> {
  const ranges = await redis.cluster('SLOTS');
  const r = ranges.find(([from, to]) => slot >= from && slot <= to)!;
  return `${r[2][0]}:${r[2][1]}`;
}
