import cron from 'node-cron';
import type { RedisClient } from '../../shared/redis/connection';
import { createRedis } from '../../shared/redis/connection';
import { logger } from '../../shared/logger';
import { expireImages } from './expire-images';
import { expireFiles } from '../../shared/batches/files';
import { rollupUsage } from './rollup-usage';
import { maintainPartitions } from '../../shared/db/partitions';
import { expireStoredResponses, failAbandonedBackground } from '../../shared/responses/retention';
import { config } from '../../shared/config/env';
import { startMetricsServer } from '../metrics-server';
import { db } from '../../shared/db/sequelize';
import { enforcePreflight } from '../../shared/preflight';
import { exitOnStartupError } from '../../shared/startup/exit';

export interface ClockTask {
  name: string;
  schedule: string;
  run(redis: RedisClient): Promise<unknown>;
}

/** Every periodic task, in one list; exactly one clock process runs them. Later issues add theirs. */
export const CLOCK_TASKS: ClockTask[] = [
  { name: 'expire-images', schedule: '0 */10 * * * *', run: () => expireImages() },
  { name: 'expire-batch-files', schedule: '30 */10 * * * *', run: () => expireFiles() },
  { name: 'rollup-usage', schedule: '0 */5 * * * *', run: () => rollupUsage() },
  { name: 'partitions', schedule: '30 7 * * * *', run: () => maintainPartitions() },
  { name: 'expire-stored-responses', schedule: '0 20 * * * *', run: () => expireStoredResponses() },
  { name: 'fail-abandoned-background', schedule: '45 * * * * *', run: (redis) => failAbandonedBackground(redis) },
];

/** node-cron's messages (a run skipped while the last one still runs) in the process's log, with the task's name. */
const cronLogger = (task: string) => ({
  info: (m: string) => logger.info({ task }, m),
  warn: (m: string) => logger.warn({ task }, m),
  error: (m: string | Error, err?: Error) => logger.error({ task, err: err ?? m }, typeof m === 'string' ? m : 'clock task error'),
  debug: (m: string | Error) => logger.debug({ task }, String(m)),
});

/**
 * Schedules `tasks` (default: every task) on node-cron; a task's failure is logged, never fatal. A
 * task's run is skipped while its previous run is still going (a rollup catching up on several days
 * after the clock was down takes longer than the 5 minutes between runs, and two runs would read the
 * same days twice at once).
 */
export function startClock(redis: RedisClient, tasks: ClockTask[] = CLOCK_TASKS): { stop(): void } {
  const jobs = tasks.map((t) =>
    cron.schedule(
      t.schedule,
      async () => {
        try {
          await t.run(redis);
        } catch (err) {
          logger.error({ err, task: t.name }, 'clock task failed');
        }
      },
      { name: t.name, noOverlap: true, logger: cronLogger(t.name) },
    ),
  );
  return { stop: () => jobs.forEach((j) => j.stop()) };
}

async function main(): Promise<void> {
  const cfg = config();
  await enforcePreflight('clock', cfg);
  db(); // tasks such as expire-images use the models
  const redis = createRedis('command');
  const metrics = process.env.METRICS_PORT ? await startMetricsServer(Number(process.env.METRICS_PORT), redis) : undefined;
  const clock = startClock(redis);
  const stop = () => {
    clock.stop();
    metrics?.close();
    redis.disconnect();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  logger.info('clock started');
}

if (require.main === module) main().catch((err) => exitOnStartupError('clock', err));
