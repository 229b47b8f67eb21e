import { spawn, type ChildProcess } from 'child_process';
import path from 'path';
import { pools, setPools } from './pools';
import { startPools } from '../../workers/main';
import { implementedPools } from '../../workers/pools';
import { waitFor } from './wait';

/**
 * Stops the in-process worker pools and starts the chat pool as a child process, so a test can
 * kill or signal the worker that holds a job. `restore()` brings every in-process pool back.
 */
export async function childChatWorker(): Promise<{ child: ChildProcess; restore(): Promise<void> }> {
  await pools().close();
  setPools(undefined);
  const child = spawn(process.execPath, [path.resolve(__dirname, '../../workers/main.js'), 'chat'], {
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  const started = await waitFor(() => out.includes('workers started'), 15_000);
  if (!started) throw new Error('child worker did not start');
  return {
    child,
    async restore() {
      if (child.exitCode === null) child.kill('SIGKILL');
      if (!hasPools()) setPools(await startPools(implementedPools()));
    },
  };
}

function hasPools(): boolean {
  try {
    pools();
    return true;
  } catch {
    return false;
  }
}
