import type { RunningPools } from '../../workers/main';

let running: RunningPools | undefined;

/** The in-process worker pools started by the root hooks (a test may stop and restart them). */
export function setPools(p: RunningPools | undefined): void {
  running = p;
}

export function pools(): RunningPools {
  if (!running) throw new Error('worker pools not started');
  return running;
}
