import { expect } from 'chai';
import { spawn } from 'child_process';
import net from 'net';
import path from 'path';
import { waitFor } from '../../helpers/wait';

/** A TCP relay to the test Redis that can be cut, so a process loses Redis on demand. */
async function redisRelay(target: URL): Promise<{ url: string; cut(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

describe('shutdown: a worker whose Redis is gone still exits', () => {
  it('exits with status 1 once SHUTDOWN_GRACE_MS has passed instead of hanging on SIGTERM', async function () {
    this.timeout(30_000);
    const relay = await redisRelay(new URL(process.env.REDIS_URL!));
    const child = spawn(process.execPath, [path.resolve(__dirname, '../../../workers/main.js'), 'chat'], {
      env: { ...process.env, REDIS_URL: relay.url, LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '1500' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      let err = '';
      child.stdout!.on('data', (d) => (out += String(d)));
      child.stderr!.on('data', (d) => (err = (err + String(d)).slice(-2000)));
      expect(await waitFor(() => out.includes('workers started'), 15_000), 'child started').to.equal(true);
      await relay.cut();
      let how = '';
      const exit = new Promise<number | null>((resolve) =>
        child.once('exit', (code, signal) => {
          how = `code ${code}, signal ${signal}`;
          resolve(code);
        }),
      );
      const signalled = Date.now();
      child.kill('SIGTERM');
      const code = await Promise.race([exit, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 10_000))]);
      expect(code, `${how}; stdout: ${out.slice(-1500)}; stderr: ${err}`).to.equal(1);
      expect(Date.now() - signalled).to.be.at.least(1400);
      expect(out).to.include('shutdown did not finish in time');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
