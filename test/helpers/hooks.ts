import { db, closeDb } from '../../shared/db/sequelize';
import { migrate } from '../../shared/db/migrate';
import { seed } from '../../shared/db/seed';
import { env, startEnv } from './harness';
import { startPools, type RunningPools } from '../../workers/main';
import { implementedPools } from '../../workers/pools';
import { pools as currentPools, setPools } from './pools';

let stopSim: (() => Promise<void>) | undefined;

/** A test starting this close before midnight UTC waits for the next day to begin (DAY_EDGE_MS). */
const DAY_EDGE_MS = 20_000;

/** Milliseconds until midnight UTC when fewer than DAY_EDGE_MS remain, else 0. */
export function msToDayEdge(now = Date.now()): number {
  const left = 86_400_000 - (now % 86_400_000);
  return left < DAY_EDGE_MS ? left + 50 : 0;
}
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
  /**
   * Daily budgets, the day's usage and monthly allowances count calendar windows in UTC: a test whose
   * requests straddled midnight would see its count reset between them. No test starts in the last
   * 20 s of a day; it waits for the next one (a wait of no cost the rest of the day).
   */
  async beforeEach(this: Mocha.Context) {
    const wait = msToDayEdge();
    if (!wait) return;
    this.timeout(wait + 30_000);
    await new Promise((r) => setTimeout(r, wait));
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
