import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { childChatWorker } from '../../helpers/child-worker';
import { freePort } from '../../../scripts/services/free-port';

async function readyz(port: number): Promise<{ status: number; body: any }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) });
    return { status: res.status, body: await res.json() };
  } catch {
    return { status: 0, body: undefined };
  }
}

describe('operations: a draining process is not ready', function () {
  this.timeout(60_000);
  afterEach(resetSim);

  it('a worker answers /readyz 503 "draining" after SIGTERM while it finishes its job, which still completes', async () => {
    const o = await buildOrg(env().redis);
    const metricsPort = await freePort();
    process.env.METRICS_PORT = String(metricsPort); // the child worker inherits it
    const worker = await childChatWorker().finally(() => delete process.env.METRICS_PORT);
    try {
      expect((await readyz(metricsPort)).status).to.equal(200);
      env().sim.knobs.set('sim-chat-1', { delayMs: 3000 });
      const reply = call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'drain' }] } });
      // the job has reached the upstream (other tests' late requests may be in the log too)
      const sawDrain = () => env().sim.log.entries.some((e) => JSON.stringify((e.body as { messages?: unknown })?.messages ?? '').includes('drain'));
      expect(await waitFor(sawDrain, 10_000)).to.equal(true);
      const exited = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
      worker.child.kill('SIGTERM');
      const draining = await waitFor(async () => {
        const r = await readyz(metricsPort);
        return r.status === 503 ? r : undefined;
      }, 2500, 50);
      expect(draining, 'readyz during the drain').to.not.equal(undefined);
      expect(draining!.body.status).to.equal('draining');
      const r = await reply;
      expect(r.status, r.text).to.equal(200);
      expect(await exited).to.equal(0);
    } finally {
      await worker.restore();
    }
  });
});
