import { spawn, type ChildProcess } from 'child_process';
import path from 'path';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { leasesFreed } from '../../helpers/leases';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { freePort } from '../../../scripts/services/free-port';

const DEADLINE_MS = 1500;

/**
 * The per-request deadline (REQUEST_TIMEOUT_MS): configuration is read once per process, so these
 * requests go through a second web process started with a short deadline, on the same Redis and
 * database; the test's in-process chat worker runs the jobs.
 */
describe('the per-request deadline (chat, embeddings)', () => {
  let o: TestOrg;
  let web: ChildProcess;
  let base: string;

  before(async function () {
    this.timeout(20_000);
    o = await buildOrg(env().redis);
    const port = await freePort();
    web = spawn(process.execPath, [path.resolve(__dirname, '../../../api/server.js')], {
      env: { ...process.env, PORT: String(port), REQUEST_TIMEOUT_MS: String(DEADLINE_MS) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    base = `http://127.0.0.1:${port}`;
    const up = await waitFor(async () => (await fetch(`${base}/healthz`).catch(() => null))?.status === 200, 15_000);
    expect(up, 'the short-deadline web process came up').to.equal(true);
  });
  after(() => web?.kill('SIGKILL'));
  beforeEach(resetSim);

  for (const stream of [false, true]) {
    it(`answers 504 deadline_exceeded at the deadline${stream ? ' (streamed, before the first event)' : ''}, aborts the upstream call, frees the lease and bills nothing`, async function () {
      this.timeout(15_000);
      env().sim.knobs.set('sim-chat-1', { hang: true });
      const t = Date.now();
      const r = await call('POST', '/v1/chat/completions', {
        base,
        headers: keyHeader(o.key),
        json: { model: 'sim-chat', messages: [{ role: 'user', content: 'never answered' }], stream },
      });
      const took = Date.now() - t;
      expect(r.status, r.text).to.equal(504);
      expect(r.body.error.code).to.equal('deadline_exceeded');
      expect(r.headers.get('x-service-request-id')).to.match(/^req_/);
      expect(took, 'answered at the deadline, not before and not much after').to.be.within(DEADLINE_MS - 50, DEADLINE_MS + 2000);

      // the worker aborts its upstream call at the same deadline (the job carries it)
      expect(env().sim.log.entries, 'the request reached the upstream').to.have.length(1);
      expect(await waitFor(() => env().sim.log.entries[0].aborted, 3000), 'upstream call aborted').to.equal(true);
      expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive', 3000), 'lease freed').to.equal(true);
      await usageSettled();
      expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } }), 'nothing billed').to.equal(0);
    });
  }

  it('embeddings share the deadline: 504 deadline_exceeded, the upstream call aborted, nothing billed', async function () {
    this.timeout(15_000);
    env().sim.knobs.set('sim-embed-1', { hang: true });
    const r = await call('POST', '/v1/embeddings', { base, headers: keyHeader(o.key), json: { model: 'sim-embed', input: 'never embedded' } });
    expect(r.status, r.text).to.equal(504);
    expect(r.body.error.code).to.equal('deadline_exceeded');
    expect(env().sim.log.entries, 'the request reached the upstream').to.have.length(1);
    expect(await waitFor(() => env().sim.log.entries[0].aborted, 3000), 'upstream call aborted').to.equal(true);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } }), 'nothing billed').to.equal(0);
  });
});
