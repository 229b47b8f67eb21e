import { expect } from 'chai';
import type { ChildProcess } from 'child_process';
import { spawnWith } from '../../helpers/process';
import { startOwnRedis, type OwnRedis } from '../../helpers/own-redis';
import { freePort } from '../../../scripts/services/free-port';
import { waitFor } from '../../helpers/wait';

async function probe(port: number, path: string): Promise<{ status: number; body: any }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(4000) });
    return { status: res.status, body: await res.json() };
  } catch {
    return { status: 0, body: undefined };
  }
}

/** Starts a process on a Redis of the test's own and waits until it logs `ready`. */
async function startOn(redis: OwnRedis, rel: string, args: string[], env: Record<string, string>, ready: string): Promise<ChildProcess> {
  const child = spawnWith(rel, args, { REDIS_URL: redis.url, LOG_LEVEL: 'info', ...env });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  if (!(await waitFor(() => out.includes(ready), 30_000, 100))) {
    child.kill('SIGKILL');
    throw new Error(`${rel} did not start: ${out}`);
  }
  return child;
}

describe('operations: /livez and /readyz', function () {
  this.timeout(90_000);
  let redis: OwnRedis;
  const children: ChildProcess[] = [];
  before(async () => {
    redis = await startOwnRedis();
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await redis.stop();
  });

  it('readyz is 503 while Redis is stopped and 200 once it is back, on the web and a worker process; livez stays 200', async () => {
    const webPort = await freePort();
    const metricsPort = await freePort();
    children.push(await startOn(redis, 'api/server.js', [], { PORT: String(webPort) }, 'web listening'));
    children.push(await startOn(redis, 'workers/main.js', ['chat'], { METRICS_PORT: String(metricsPort) }, 'workers started'));

    for (const port of [webPort, metricsPort]) {
      const ready = await probe(port, '/readyz');
      expect(ready.status, JSON.stringify(ready.body)).to.equal(200);
      expect(ready.body).to.deep.equal({ status: 'ready', checks: { redis: 'ok', postgres: 'ok', subscriptions: 'ok' } });
      expect((await probe(port, '/livez')).status).to.equal(200);
      // /healthz is kept as it was
      expect(await probe(port, '/healthz')).to.deep.equal({ status: 200, body: { status: 'ok', checks: { redis: 'ok', postgres: 'ok' } } });
    }

    await redis.stop();
    for (const port of [webPort, metricsPort]) {
      const down = await waitFor(async () => {
        const r = await probe(port, '/readyz');
        return r.status === 503 ? r : undefined;
      }, 15_000, 200);
      expect(down, `port ${port}`).to.not.equal(undefined);
      expect(down!.body.status).to.equal('not_ready');
      expect(down!.body.checks.redis).to.equal('down');
      expect(down!.body.checks.postgres).to.equal('ok');
      const live = await probe(port, '/livez');
      expect(live).to.deep.equal({ status: 200, body: { status: 'ok' } });
    }

    await redis.start();
    for (const port of [webPort, metricsPort]) {
      const back = await waitFor(async () => (await probe(port, '/readyz')).status === 200, 20_000, 200);
      expect(back, `port ${port}`).to.equal(true);
      expect((await probe(port, '/readyz')).body.checks).to.deep.equal({ redis: 'ok', postgres: 'ok', subscriptions: 'ok' });
    }
  });
});
