import { spawn, type ChildProcess } from 'child_process';
import path from 'path';

/**
 * The environment a bench gives the gateway's processes (and itself, before it imports the configuration):
 * its Postgres and Redis, its own Redis key prefix, a secret key (SECRET_KEY when set) and quiet logs.
 */
export function benchEnv(services: { databaseUrl: string; redisUrl: string }, prefix: string): Record<string, string> {
  return {
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_PREFIX: prefix,
    SECRET_KEY: process.env.SECRET_KEY ?? 'bench-secret-key-bench-secret-key-0123456789',
    LOG_LEVEL: 'warn',
  };
}

/** Polls `url` until it answers below 500 (a process that has come up), or throws after `ms`. */
export async function waitHttp(url: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sends SIGTERM and waits for the exit; SIGKILL after `ms`. */
export function exited(p: ChildProcess, ms: number): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => p.kill('SIGKILL'), ms);
    p.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    p.kill('SIGTERM');
  });
}

/**
 * Runs `npm run bench`'s script (chat.bench.js) with `env` as its own process, its output on this
 * one's, and throws when it fails: the wrappers that read what it leaves behind (profile.ts: CPU
 * profiles, stages.ts: timelines) run it this way.
 */
export async function runChatBench(env: NodeJS.ProcessEnv): Promise<void> {
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'chat.bench.js')], { env, stdio: 'inherit' });
    child.on('exit', (c) => resolve(c ?? 1));
  });
  if (code !== 0) throw new Error(`the bench exited with ${code}`);
}

/** Sets the simulator's knobs for one upstream model (scripts/simulator/knobs.ts; `POST /_sim/knobs`). */
export async function setSimKnobs(simUrl: string, model: string, knobs: Record<string, unknown>): Promise<void> {
  await fetch(`${simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, ...knobs }) });
}

/**
 * BENCH_STREAM_ONE_WRITE=1 (`npm run bench`, `npm run bench:ab`): the simulator sends each chat stream
 * of the bench's model in one write (its `oneWrite` knob), as the peer harness's stub does, so a
 * stream's events reach the worker in one read.
 */
export async function streamsInOneWriteIfAsked(simUrl: string): Promise<void> {
  if (process.env.BENCH_STREAM_ONE_WRITE === '1') await setSimKnobs(simUrl, 'sim-chat-1', { oneWrite: true });
}
