import { db, closeDb } from '../../shared/db/sequelize';
import { migrate } from '../../shared/db/migrate';
import { seed } from '../../shared/db/seed';
import { env, startEnv } from './harness';
import { startPools, type RunningPools } from '../../workers/main';
import { implementedPools } from '../../workers/pools';
import { pools as currentPools, setPools } from './pools';

let stopSim: (() => Promise<void>) | undefined;
let pools: RunningPools | undefined;

/**
 * Root hooks: one migrated database, one simulator, one gateway app and the implemented worker
 * pools in-process, for the whole run. Tests make their own orgs, so they need no truncation.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await migrate(db());
    const started = await startEnv();
    stopSim = started.stopSim;
    await seed(started.env.redis, started.env.simUrl);
    pools = await startPools(implementedPools());
    setPools(pools);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await currentPools().close();
    await env().gw.close();
    env().redis.disconnect();
    await stopSim?.();
    await closeDb();
  },
};
