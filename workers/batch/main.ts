import type { Config } from '../../shared/config/env';
import { runProcess } from '../../shared/run-http-process';
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
if (require.main === module) runProcess('batchworker', () => startBatchWorker(), (cfg) => [{ pod: cfg.podId }, 'batchworker started']);
