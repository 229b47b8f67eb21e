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
  const { children, restore } = await childChatWorkers(1);
  return { child: children[0], restore };
}

/** `childChatWorker` with `n` child processes, each with `extraEnv` on top of the test's environment. */
export async function childChatWorkers(n: number, extraEnv: Record<string, string> = {}): Promise<{ children: ChildProcess[]; restore(): Promise<void> }> {
  if (hasPools()) {
    await pools().close();
    setPools(undefined);
  }
  const children: ChildProcess[] = [];
  const restore = async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    if (!hasPools()) setPools(await startPools(implementedPools()));
  };
  try {
    for (let i = 0; i < n; i++) {
      const child = spawn(process.execPath, [path.resolve(__dirname, '../../workers/main.js'), 'chat'], {
        env: { ...process.env, LOG_LEVEL: 'info', ...extraEnv },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (d) => (out += String(d)));
      const started = await waitFor(() => out.includes('workers started'), 15_000);
      if (!started) throw new Error('child worker did not start');
    }
  } catch (err) {
    await restore();
    throw err;
  }
  return { children, restore };
}

function hasPools(): boolean {
  try {
    pools();
    return true;
  } catch {
    return false;
  }
}
