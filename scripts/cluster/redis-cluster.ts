import { spawn, spawnSync, type ChildProcess } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import { Redis } from 'ioredis';
import { redisServerBinary } from '../services/redis';

/** A Redis Cluster of this process's own on loopback; `nodes` is the REDIS_CLUSTER_NODES value. */
export interface LocalCluster {
  ports: number[];
  nodes: string;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = net.createServer().once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await tryListen(port)) && (await tryListen(port + 10_000))) return port;
  }
  throw new Error('no free port pair for a cluster node');
}

async function waitUntil(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function info(port: number, command: string[]): Promise<string> {
  const c = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return String(await c.call(command[0], ...command.slice(1)));
  } finally {
    c.disconnect();
  }
}

/**
 * Starts `masters` redis-server processes (the machine's binary) with cluster mode on free loopback
 * ports, in a temporary directory of their own, joins them with `redis-cli --cluster create`
 * (no replicas) and waits until every node reports the cluster ok. `stop` kills them and removes the
 * directory; nothing else on the machine is touched.
 */
export async function startLocalCluster(masters = 3): Promise<LocalCluster> {
  const server = redisServerBinary(); // installed with apt-get when missing (redis-cli comes with it)
  const cli = path.join(path.dirname(server), 'redis-cli');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-redis-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) {
    const p = await freeClusterPort(taken);
    taken.add(p).add(p + 10_000);
    ports.push(p);
  }
  const children: ChildProcess[] = ports.map((port) => {
    const nodeDir = path.join(dir, String(port));
    fs.mkdirSync(nodeDir);
    return spawn(
      server,
      ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
        '--cluster-node-timeout', '5000', '--dir', nodeDir, '--save', '', '--appendonly', 'no', '--logfile', 'redis.log'],
      { stdio: 'ignore' },
    );
  });
  const stop = async () => {
    await Promise.all(
      children.map((c) => new Promise<void>((resolve) => {
        if (c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once('exit', () => resolve());
        c.kill('SIGTERM');
        setTimeout(() => c.kill('SIGKILL'), 3000).unref();
      })),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) await waitUntil(async () => (await info(port, ['PING'])) === 'PONG', 10_000, `redis-server on ${port}`);
    const created = spawnSync(fs.existsSync(cli) ? cli : 'redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (const port of ports) {
      await waitUntil(async () => /cluster_state:ok/.test(await info(port, ['CLUSTER', 'INFO'])), 20_000, `cluster state ok on ${port}`);
    }
    return { ports, nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
