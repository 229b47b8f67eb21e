import type { RedisClient } from '../../shared/redis/connection';
import type { Simulator } from '../../scripts/simulator/server';
import type { GatewayProcess } from './processes';

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
