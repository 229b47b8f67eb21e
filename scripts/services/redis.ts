import { spawn, spawnSync, type ChildProcess } from 'child_process';
import fs from 'fs';
import { Redis } from 'ioredis';

export interface Started {
  url: string;
  stop(): Promise<void>;
}

function which(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

async function answers(url: string): Promise<boolean> {
  const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.ping();
    return true;
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

/** Debian's redis-server from PATH; installed with apt-get when missing and running as root. */
export function redisServerBinary(): string {
  const found = which('redis-server');
  if (found) return found;
  if (process.getuid?.() === 0 && which('apt-get')) {
    process.stdout.write('redis-server not found; installing it with apt-get...\n');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    const r = spawnSync('apt-get', ['install', '-y', '-qq', 'redis-server'], { stdio: 'inherit', env });
    const after = which('redis-server') ?? (fs.existsSync('/usr/bin/redis-server') ? '/usr/bin/redis-server' : undefined);
    if (r.status === 0 && after) return after;
  }
  throw new Error('Redis is needed: install it (Debian/Ubuntu: sudo apt-get install redis-server) or set REDIS_URL.');
}

/**
 * Uses REDIS_URL when set; otherwise a redis-server child on `port` (or one already answering
 * there), for local use only. With `dataDir` it persists there (append-only file, fsync every
 * second), so sessions and kill switches survive a restart; without it (tests) nothing is kept, and
 * usage events still in the outbox are written to Postgres when the workers stop (Ctrl-C).
 * Production Redis must persist (AOF): README, *Usage metering*.
 */
export async function ensureRedis(port: number, dataDir?: string): Promise<Started> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => undefined };
  const url = `redis://127.0.0.1:${port}`;
  if (await answers(url)) return { url, stop: async () => undefined };
  const bin = redisServerBinary();
  if (dataDir) fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const persistence = dataDir ? ['--dir', dataDir, '--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
  const child: ChildProcess = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--daemonize', 'no', '--loglevel', 'warning'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 100; i++) {
    if (await answers(url)) break;
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Deletes every key of a prefix (plain and hash-tagged BullMQ keys), never the whole database. */
export async function deleteKeysByPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    for (const pattern of [`${prefix}:*`, `{${prefix}}:*`]) {
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (found.length) await redis.del(...found);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
