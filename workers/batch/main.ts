import { config, type Config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { closeDb } from '../../shared/db/sequelize';
import { forceExitAfter } from '../../shared/shutdown';
import { enforcePreflight } from '../../shared/preflight';
import { exitOnStartupError } from '../../shared/startup/exit';
import { closeContext, createContext } from '../../api/context';
import { BatchRunner } from './runner';

/** The batch runner with a context of its own (caches, reply channel); `close` lets lines in flight finish. */
export async function startBatchWorker(overrides: Partial<Config['batches']> = {}): Promise<{ runner: BatchRunner; close(): Promise<void> }> {
  const ctx = await createContext();
  const runner = new BatchRunner(ctx, overrides);
  await runner.start();
  return {
    runner,
    async close() {
      await runner.stop();
      await closeContext(ctx);
    },
  };
}

/** Procfile `batchworker`: one or more per deployment (they share the work through Postgres row claims). */
if (require.main === module) {
  (async () => {
    const cfg = config();
    await enforcePreflight('batchworker', cfg);
    const proc = await startBatchWorker();
    const stop = async () => {
      forceExitAfter(cfg.shutdownGraceMs);
      await proc.close();
      await closeDb();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
    logger.info({ pod: cfg.podId, runner: proc.runner.id }, 'batchworker started');
  })().catch((err) => exitOnStartupError('batchworker', err));
}
