import type { Worker } from 'bullmq';
import { config } from '../shared/config/env';
import { logger } from '../shared/logger';
import { closeDb } from '../shared/db/sequelize';
import { enforcePreflight } from '../shared/preflight';
import { markDraining } from '../shared/health/readiness';
import { exitOnStartupError } from '../shared/startup/exit';
import { StartupError } from '../shared/startup/startup-error';
import { forceExitAfter } from '../shared/shutdown';
import { isPoolName, POOLS, type PoolName } from '../shared/queues/names';
import { POOL_STARTERS, implementedPools } from './pools';
import { closeWorkerRuntime, createWorkerRuntime, type WorkerRuntime } from './runtime';
import { startMetricsServer } from './metrics-server';
import { SchedulerSettingsFollower } from './scheduler-settings';
import { ConcurrencyGovernor } from './concurrency-governor';
import { shardPosition } from '../shared/queues/shards';
import { ExpressAnnouncer, expressSlots } from '../shared/queues/express';

/** The queues whose workers the governor adapts: the interactive lanes (background lanes soak up idle capacity anyway). */
const INTERACTIVE: readonly string[] = ['chat-interactive', 'embeddings'];
/** Not the express workers: their few slots are the reserve of quiet orgs (shared/queues/express.ts). */
const interactive = (w: Worker) => !shardPosition(w.name)?.express && INTERACTIVE.includes(shardPosition(w.name)?.queue ?? w.name);
import { UsageDrainers } from '../shared/metering/usage-drainers';
import { outboxStats } from '../shared/metering/usage-outbox';
import { addUsageOutboxSource } from '../shared/metrics';
import { startTracing, stopTracing } from '../shared/tracing/trace';

/** Validates pool names; an unknown or unimplemented pool fails at start. */
export function parsePools(args: string[]): PoolName[] {
  const names = args.flatMap((a) => a.split(',')).map((s) => s.trim()).filter(Boolean);
  const problems: string[] = [];
  for (const n of names) {
    if (!isPoolName(n)) problems.push(`unknown pool '${n}'`);
    else if (!POOL_STARTERS[n]) problems.push(`pool '${n}' is not implemented`);
  }
  if (names.length === 0) problems.push(`name at least one pool (${implementedPools().join(', ')})`);
  if (problems.length) throw new StartupError(`${problems.join('; ')}: name pools as arguments or in WORKER_POOLS (${implementedPools().join(', ')})`);
  return names as PoolName[];
}

export interface RunningPools {
  runtime: WorkerRuntime;
  workers: Worker[];
  /** Applies the operator's scheduler-endpoints settings to `workers` as they change. */
  settings: SchedulerSettingsFollower;
  /** Takes fewer interactive jobs while this process's loop lags under several orgs (WORKER_LAG_MS). */
  governor: ConcurrencyGovernor;
  /** Move usage events from the Redis outbox streams to Postgres (every worker process runs one per stream). */
  drainer: UsageDrainers;
  /** Stops taking jobs, lets in-flight jobs finish, drains the usage outbox, closes connections. */
  close(): Promise<void>;
}

export async function startPools(pools: PoolName[]): Promise<RunningPools> {
  const runtime = await createWorkerRuntime(pools.flatMap((p) => POOLS[p]));
  const workers = pools.flatMap((p) => POOL_STARTERS[p]!(runtime));
  for (const w of workers) w.on('error', (err) => logger.error({ err, queue: w.name }, 'worker error'));
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  // Workers are created stopped (autorun off): the operator's settings apply first, so a queue paused
  // by `enabled: false` takes no job from a process that has just started.
  // interactive lanes take fewer jobs while this process's loop lags (WORKER_LAG_MS; docs/scaling.md)
  const governor = new ConcurrencyGovernor(workers.filter(interactive), config().workerGovernor, workers.filter((w) => shardPosition(w.name)?.express));
  const settings = new SchedulerSettingsFollower(workers, runtime.sub, undefined, governor);
  await settings.start();
  governor.start();
  for (const w of workers) if (!w.isPaused()) void w.run().catch((err) => logger.error({ err, queue: w.name }, 'worker stopped'));
  // pods send express jobs only once a worker's express slots are announced
  const express = new ExpressAnnouncer(runtime.redis, config().podId, expressSlots(workers));
  await express.start();
  const drainer = new UsageDrainers();
  await drainer.start();
  const dropMetrics = addUsageOutboxSource({ stats: () => outboxStats(runtime.redis) });
  return {
    runtime,
    workers,
    settings,
    governor,
    drainer,
    async close() {
      settings.stop();
      governor.stop();
      await express.stop();
      await Promise.all(workers.map((w) => w.close()));
      await drainer.stop(); // after the workers: their last usage events go to Postgres too
      dropMetrics();
      await closeWorkerRuntime(runtime);
    },
  };
}

async function main(): Promise<void> {
  const cfg = config();
  const pools = parsePools(process.argv.slice(2).length ? process.argv.slice(2) : (process.env.WORKER_POOLS ?? '').split(','));
  await enforcePreflight('workers', cfg);
  startTracing('gateway-worker');
  const running = await startPools(pools);
  const metrics = process.env.METRICS_PORT ? await startMetricsServer(Number(process.env.METRICS_PORT), running.runtime.redis, [running.runtime.sub]) : undefined;
  const stop = async (signal: string) => {
    logger.info({ signal }, 'draining workers');
    markDraining();
    forceExitAfter(cfg.shutdownGraceMs);
    await running.close();
    await stopTracing().catch((err) => logger.warn({ err }, 'tracing shutdown failed'));
    metrics?.close(); // after the drain: /readyz answers 503 meanwhile
    await closeDb();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  // Only now: whoever waits for this line (a supervisor, a test) may send SIGTERM at once.
  logger.info({ pools, pod: cfg.podId }, 'workers started');
}

if (require.main === module) {
  main().catch((err) => exitOnStartupError('workers', err));
}
