import { spawn, type ChildProcess } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import { freePort } from '../../scripts/services/free-port';
import { waitFor } from './wait';

const DIST = path.resolve(__dirname, '../..');

/** A web pod (dist/api/server.js) as its own process, on a free port, with extra environment. */
export async function spawnWeb(extraEnv: Record<string, string> = {}, stderr: 'inherit' | 'ignore' | 'pipe' = 'inherit'): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(DIST, 'api/server.js')], {
    env: { ...process.env, PORT: String(port), ...extraEnv },
    stdio: ['ignore', 'ignore', stderr],
  });
  const url = `http://127.0.0.1:${port}`;
  // polled often: a refused connection costs nothing, and every spawned pod is waited for this way
  const up = await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 20_000, 25);
  if (!up) throw new Error('web process did not come up');
  return { child, url };
}

/** A worker process (dist/workers/main.js <pool>), waiting until it reports its pools started. */
export async function spawnWorker(pool: string, extraEnv: Record<string, string> = {}, stderr: 'inherit' | 'ignore' | 'pipe' = 'inherit'): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(DIST, 'workers/main.js'), pool], {
    env: { ...process.env, LOG_LEVEL: 'info', ...extraEnv },
    stdio: ['ignore', 'pipe', stderr],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  if (!(await waitFor(() => out.includes('workers started'), 20_000, 20))) throw new Error(`${pool} worker did not start`);
  return child;
}

/** Kills a child and waits for it to exit. */
export async function kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/**
 * A redis-server of the test's own (never the shared one), with AOF as production requires, on a
 * free loopback port; `stop()` kills it (as a crash would) and `start()` brings it back on the same
 * port and data directory.
 */
export async function ownRedis(): Promise<{ url: string; port: number; start(): Promise<void>; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-fault-redis-'));
  let child: ChildProcess | undefined;
  const ping = () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
      s.on('data', (d) => {
        resolve(String(d).startsWith('+PONG'));
        s.destroy();
      });
      s.on('error', () => resolve(false));
    });
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '', '--protected-mode', 'yes'], { stdio: 'ignore' });
    if (!(await waitFor(ping, 10_000, 50))) throw new Error('own redis-server did not start');
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    async stop() {
      if (child) await kill(child);
      child = undefined;
    },
  };
}

/** A TCP proxy to `target` on a free loopback port that a test can cut (every connection dropped, new ones refused) and restore. */
export async function tcpProxy(targetHost: string, targetPort: number): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, targetHost);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    if (s) await new Promise((r) => s.close(r));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}
