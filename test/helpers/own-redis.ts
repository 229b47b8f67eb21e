import { spawn, type ChildProcess } from 'child_process';
import { Redis } from 'ioredis';
import { freePort } from '../../scripts/services/free-port';

/**
 * A redis-server of the test's own on a free loopback port (never the shared one), which the test may
 * stop and start again on the same port. Nothing is persisted: a restart comes back empty.
 */
export class OwnRedis {
  private child: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort());
    await r.up();
    return r;
  }

  async up(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const c = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.ping();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      } finally {
        c.disconnect();
      }
    }
    throw new Error('own redis-server did not start');
  }

  async down(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}
