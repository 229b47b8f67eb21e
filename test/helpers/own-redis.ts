import { spawn, type ChildProcess } from 'child_process';
import { Redis } from 'ioredis';
import { freePort } from '../../scripts/services/free-port';
import { redisServerBinary } from '../../scripts/services/redis';
import { waitFor } from './wait';

/**
 * A redis-server of the test's own on a free loopback port (never the shared one), with extra
 * arguments (e.g. `--maxmemory-policy allkeys-lru`); it can be stopped and started again on the same port.
 */
export interface OwnRedis {
  port: number;
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  let refused = false; // a server with --requirepass answers too: NOAUTH (as an event, to HELLO)
  c.on('error', (err: Error) => (refused ||= /NOAUTH/.test(err.message)));
  try {
    await c.connect();
    return (await c.ping()) === 'PONG';
  } catch (err) {
    return refused || /NOAUTH/.test((err as Error).message);
  } finally {
    c.disconnect();
  }
}

export async function startOwnRedis(extra: string[] = []): Promise<OwnRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const own: OwnRedis = {
    port,
    url,
    async start() {
      child = spawn(redisServerBinary(), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', ...extra], { stdio: 'ignore' });
      if (!(await waitFor(() => answers(url), 10_000, 100))) throw new Error(`own redis-server on ${port} did not start`);
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return; // already ended
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGKILL');
      });
    },
  };
  await own.start();
  return own;
}
