import type { Config } from '../../shared/config/env';
import { runProcess } from '../../shared/run-http-process';
import { closeContext, createContext, type AppContext } from '../../api/context';
import { startMetricsServer } from '../metrics-server';
import { BatchRunner } from './runner';

/** The batch runner with a context of its own (caches, reply channel); `close` lets lines in flight finish. */
export async function startBatchWorker(overrides: Partial<Config['batches']> = {}): Promise<{ runner: BatchRunner; ctx: AppContext; close(): Promise<void> }> {
  const ctx = await createContext(undefined, { expressSlots: false }); // a batch line waits for nobody: no share of the express slots
  const runner = new BatchRunner(ctx, overrides);
  await runner.start();
  return {
    runner,
    ctx,
    async close() {
      await runner.stop();
      await closeContext(ctx);
    },
  };
}

/**
 * Procfile `batchworker`: one or more per deployment (they share the work through Postgres row claims);
 * with METRICS_PORT it serves /livez, /readyz, /healthz and /metrics there, as the workers do.
 */
async function startProcess(cfg: Config): Promise<{ close(): Promise<void> }> {
  const proc = await startBatchWorker();
  const metrics = cfg.metricsPort ? await startMetricsServer(cfg.metricsPort, proc.ctx.redis, [proc.ctx.sub]) : undefined;
  return {
    async close() {
      await proc.close();
      metrics?.closeAllConnections();
      await new Promise<void>((resolve) => (metrics ? metrics.close(() => resolve()) : resolve()));
    },
  };
}

if (require.main === module) runProcess('batchworker', startProcess, (cfg) => [{ pod: cfg.podId, metricsPort: cfg.metricsPort }, 'batchworker started']);
