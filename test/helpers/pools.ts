import { startPools, type RunningPools } from '../../workers/main';
import { implementedPools } from '../../workers/pools';
import { resetConfig } from '../../shared/config/env';

let running: RunningPools | undefined;

/** The in-process worker pools started by the root hooks (a test may stop and restart them). */
export function setPools(p: RunningPools | undefined): void {
  running = p;
}

export function pools(): RunningPools {
  if (!running) throw new Error('worker pools not started');
  return running;
}

/**
 * Mocha hooks for a suite that runs with `vars` set (e.g. QUEUE_SHARDS_CHAT): before it, the settings
 * are applied and the in-process pools restarted so they read them; after it, both are restored.
 */
export function poolsWithSettings(vars: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const restart = async () => {
    resetConfig();
    await pools().close();
    setPools(await startPools(implementedPools()));
  };
  before(async () => {
    Object.assign(process.env, vars);
    await restart();
  });
  after(async () => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    await restart();
  });
}
