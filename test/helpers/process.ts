import { spawn, type ChildProcess } from 'child_process';
import path from 'path';

const DIST = path.resolve(__dirname, '../..');

/** A compiled entry point, e.g. `api/server.js`, `workers/main.js`, `scripts/cli.js`. */
export const entry = (rel: string) => path.join(DIST, rel);

export interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stderr's non-empty lines. */
  lines: string[];
}

/** Runs a process from dist/ with the test environment plus `env` (undefined removes a variable) to its end. */
export function runToEnd(rel: string, args: string[], env: Record<string, string | undefined>, timeoutMs = 20_000, cwd?: string): Promise<Ended> {
  const child = spawnWith(rel, args, env, cwd);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += String(d)));
  child.stderr!.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${rel} did not end within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, lines: stderr.split('\n').filter((l) => l.trim()) });
    });
  });
}

export function spawnWith(rel: string, args: string[], env: Record<string, string | undefined>, cwd?: string): ChildProcess {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  return spawn(process.execPath, [entry(rel), ...args], { env: merged, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}
