import path from 'path';
import { ensureServices, DEV_PROFILE } from './services';
import { acquireInstanceLock } from './services/instance-lock';
import { pickPort } from './services/pick-port';
import { enforcePreflight } from '../shared/preflight';
import { exitOnStartupError } from '../shared/startup/exit';
import { where } from '../shared/startup/explain';
import { localSecret, writeLocalEnv } from './local-env';
import { startSimulator } from './simulator/server';
import { config } from '../shared/config/env';
import { db, closeDb } from '../shared/db/sequelize';
import { migrate } from '../shared/db/migrate';
import { seed } from '../shared/db/seed';
import { createRedis } from '../shared/redis/connection';
import { startWeb } from '../api/server';
import { startTracing } from '../shared/tracing/trace';
import { startAdmin } from '../api/admin/server';
import { startPools } from '../workers/main';
import { implementedPools } from '../workers/pools';
import { startClock } from '../workers/cron/clock';
import { startBatchWorker } from '../workers/batch/main';

/** One line per start-up step, so a first start (Postgres initialising) never looks stuck. */
const step = (what: string) => process.stdout.write(`${what}...\n`);

/**
 * The embedded default (`npm start`): every process type in one Node process, on Redis and Postgres
 * that it starts itself when REDIS_URL / DATABASE_URL are unset, plus the upstream simulator, a
 * migrated and seeded database, and a demo key printed on first start. Ctrl-C stops it all.
 */
async function main(): Promise<void> {
  // Before anything touches the data: a second instance on the same .data refuses in one line.
  const lock = acquireInstanceLock(path.resolve('.data'));
  process.on('exit', () => lock.release());
  step('starting Redis and Postgres (the first start initialises Postgres under .data)');
  const services = await ensureServices(DEV_PROFILE);
  process.env.DATABASE_URL = services.databaseUrl;
  process.env.REDIS_URL = services.redisUrl;
  process.env.SECRET_KEY = localSecret();
  // Ports of what this process serves: the variables when set, else the defaults, else free ones.
  process.env.PORT = String(await pickPort('PORT', 8080));
  process.env.ADMIN_PORT = String(await pickPort('ADMIN_PORT', 8081));
  const simPort = process.env.SIMULATOR_URL ? 0 : await pickPort('SIMULATOR_PORT', 8090);
  const simulatorUrl = process.env.SIMULATOR_URL ?? `http://127.0.0.1:${simPort}`;
  writeLocalEnv({ DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl });

  // Configuration is read lazily: the first config() call, below, validates the completed environment.

  const cfg = config();
  startTracing('gateway'); // one process runs web, workers and clock: one service name for all
  const base = `http://localhost:${cfg.port}`;
  lock.announce(base);
  const sim = process.env.SIMULATOR_URL ? undefined : await startSimulator(simPort);
  step('migrating the database');
  await migrate(db());
  await enforcePreflight('gateway', cfg);
  const redis = createRedis('command');
  step('seeding plans, the default catalog and the demo organization');
  const { demoKey } = await seed(redis, simulatorUrl);
  step('starting the worker pools, the batch runner, the clock, the web and admin servers');
  const pools = await startPools(implementedPools());
  const clock = startClock(redis);
  const batches = await startBatchWorker();
  const web = await startWeb(cfg.port);
  const admin = await startAdmin(cfg.adminPort);

  process.stdout.write(
    [
      '',
      `gateway  ${base}   (admin http://localhost:${cfg.adminPort})`,
      `upstream simulator ${simulatorUrl}`,
      `redis    ${where(services.redisUrl)}   postgres ${where(services.databaseUrl)}`,
      `probes   ${base}/livez  ${base}/readyz`,
      demoKey
        ? `demo API key (shown once, store it now): ${demoKey.key}`
        : 'demo API key: printed at first start; make another with `npx gateway key create --org demo`',
      `try: curl ${base}/v1/models -H "SERVICE-API-KEY: <key>"`,
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nstopping...\n');
    clock.stop();
    await web.close();
    await admin.close();
    await batches.close();
    await pools.close();
    await sim?.close();
    redis.disconnect();
    await closeDb();
    await services.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((err) => exitOnStartupError('gateway', err));
