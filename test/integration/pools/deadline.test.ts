import { spawn, type ChildProcess } from 'child_process';
import path from 'path';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { usageSettled } from '../../helpers/usage';
import { hitsByUpstream, poolModel, simDeployment } from '../../helpers/pool-models';
import { UsageEvent } from '../../../shared/db/models';
import { freePort } from '../../../scripts/services/free-port';
import { poolsWithSettings } from '../../helpers/pools';

const DEADLINE_MS = 3000;
/** The worker's margin before the deadline in the tests that wait near it: wide enough for a busy machine (four test shards on two cores missed 1 s once), where 200 ms is not. */
const MARGIN_MS = 1500;

/** Requests through a second web process with a short REQUEST_TIMEOUT_MS (config is read once per process). */
describe('model pools: retries stop at the deadline', () => {
  let o: TestOrg;
  let web: ChildProcess;
  let base: string;
  before(async function () {
    this.timeout(45_000);
    o = await buildOrg(env().redis);
    const port = await freePort();
    web = spawn(process.execPath, [path.resolve(__dirname, '../../../api/server.js')], {
      env: { ...process.env, PORT: String(port), REQUEST_TIMEOUT_MS: String(DEADLINE_MS) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    base = `http://127.0.0.1:${port}`;
    expect(await waitFor(async () => (await fetch(`${base}/healthz`).catch(() => null))?.status === 200, 30_000), 'the short-deadline web process answers /healthz').to.equal(true);
  });
  after(() => web?.kill('SIGKILL'));
  beforeEach(resetSim);
  // A held request left by a failed test must not hold the pools' restart (poolsWithSettings) forever.
  afterEach(resetSim);

  it('makes no attempt that would start after the deadline, and answers the last failure in time, billing nothing', async () => {
    const only = simDeployment('only');
    const model = await poolModel([only]);
    env().sim.knobs.set(only.upstream, { status: 503, retryAfter: 2 });
    const t = Date.now();
    const r = await call('POST', '/v1/chat/completions', { base, headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'late' }] } });
    const took = Date.now() - t;
    expect(r.status, r.text).to.equal(503);
    expect(r.body.error.code).to.equal('upstream_unavailable');
    // attempts at 0 s and 2 s; a third (allowed by POOL_MAX_ATTEMPTS=3) would start at 4 s, past the 3 s deadline.
    // A 503 (not the pod's 504 deadline_exceeded) shows the worker stopped and answered in time.
    expect(r.headers.get('x-service-attempts')).to.equal('2');
    expect(hitsByUpstream().get(only.upstream)).to.equal(2);
    expect(took).to.be.at.least(1900);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(0);
  });

  describe('with POOL_DEADLINE_MARGIN_MS=1500 (a margin wide enough for a busy machine)', () => {
    poolsWithSettings({ POOL_DEADLINE_MARGIN_MS: String(MARGIN_MS) });

    it("waits while every deployment is at its limit, then answers the lane's 429 with Retry-After before the deadline", async () => {
      const one = simDeployment('one', { max_concurrency: 1 });
      const model = await poolModel([one]);
      env().sim.knobs.set(one.upstream, { hold: true });
      const body = { model, messages: [{ role: 'user', content: 'wait for me' }] };
      const holder = call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: body }); // the main gateway: long deadline
      expect(await waitFor(() => env().sim.log.entries.length === 1)).to.equal(true);
      const t = Date.now();
      const r = await call('POST', '/v1/chat/completions', { base, headers: keyHeader(o.key), json: body });
      expect(r.status, r.text).to.equal(429);
      expect(r.body.error.code).to.equal('CONCURRENT_REQUEST_LIMIT_EXCEEDED');
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      expect(Date.now() - t, 'it waited for a slot (until its margin before the deadline)').to.be.at.least(DEADLINE_MS - MARGIN_MS - 600);
      expect(env().sim.log.entries, 'the full deployment was never called twice').to.have.length(1);
      env().sim.knobs.release();
      expect((await holder).status).to.equal(200);
      await usageSettled();
      expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(0);
    });

    it('starts no attempt on another deployment once the deadline is near: the last failure is answered, with its headers', async () => {
      const a = simDeployment('a', { priority: 0 });
      const b = simDeployment('b', { priority: 1 });
      const model = await poolModel([a, b]);
      // a fails 2.3 s or more into the 3 s deadline: past its margin (1.5 s here), where b (1 s) could not answer in time
      env().sim.knobs.set(a.upstream, { delayMs: DEADLINE_MS - 700, status: 503 });
      env().sim.knobs.set(b.upstream, { delayMs: 1000 });
      const r = await call('POST', '/v1/chat/completions', { base, headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'late failover' }] } });
      expect(r.status, r.text).to.equal(503);
      expect(r.body.error.code).to.equal('upstream_unavailable');
      expect(r.headers.get('x-service-deployment')).to.equal('a');
      expect(r.headers.get('x-service-attempts')).to.equal('1');
      expect(hitsByUpstream().get(b.upstream) ?? 0, 'no call to b (1 s) that the deadline would cut (the caller got 504)').to.equal(0);
    });
  });
});
