import { db, closeDb } from '../../shared/db/sequelize';
import { migrate } from '../../shared/db/migrate';
import { seed } from '../../shared/db/seed';
import { createRedis, isCluster } from '../../shared/redis/connection';
import { startSimulator } from '../../scripts/simulator/server';
import { startChatWorker, startWebPod } from './processes';
import { clusterEnv, setClusterEnv } from './env';

let stopSim: (() => Promise<void>) | undefined;

/**
 * Root hooks of the cluster suite (run by scripts/cluster/run.ts with REDIS_CLUSTER_NODES set): one
 * migrated database, the upstream simulator in this process, and the gateway as separate processes,
 * two web pods and two chat worker processes, all on the Redis Cluster.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(90_000);
    const redis = createRedis('command');
    if (!isCluster(redis)) throw new Error('the cluster suite needs REDIS_CLUSTER_NODES (run it with npm run test:cluster)');
    await migrate(db());
    const s = await startSimulator(0);
    stopSim = s.close;
    await seed(redis, s.url);
    const [webA, webB, w1, w2] = await Promise.all([startWebPod('web-a'), startWebPod('web-b'), startChatWorker('worker-1'), startChatWorker('worker-2')]);
    setClusterEnv({ redis, sim: s.sim, simUrl: s.url, webs: [webA, webB], workers: [w1, w2] });
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    const e = clusterEnv();
    await Promise.all([...e.webs, ...e.workers].map((p) => p.stop()));
    e.redis.disconnect();
    await stopSim?.();
    await closeDb();
    setClusterEnv(undefined);
  },
};
