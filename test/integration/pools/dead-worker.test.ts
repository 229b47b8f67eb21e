import { expect } from 'chai';
import type { ChildProcess } from 'child_process';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { childChatWorker } from '../../helpers/child-worker';
import { kill, spawnWeb } from '../../helpers/processes';
import { poolModel, poolStateOf, simDeployment } from '../../helpers/pool-models';
import { config } from '../../../shared/config/env';

const chat = (key: string, model: string, base?: string) =>
  call('POST', '/v1/chat/completions', { base, headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'lease' }] } });

/** Sends a request that a child chat worker takes upstream (held), then kills that worker; returns the request's answer. */
async function killedMidAttempt(key: string, model: string, upstream: string): Promise<Reply> {
  env().sim.knobs.set(upstream, { hold: true });
  const w = await childChatWorker();
  let pending: Promise<Reply>;
  try {
    pending = chat(key, model);
    expect(await waitFor(() => env().sim.log.entries.length === 1)).to.equal(true);
    w.child.kill('SIGKILL');
  } finally {
    await w.restore();
  }
  const r = await pending;
  env().sim.knobs.set(upstream, {});
  env().sim.knobs.release();
  return r;
}

/**
 * An attempt's in-flight entry (what max_concurrency counts) is a short lease its worker renews
 * while the attempt runs (POOL_INFLIGHT_LEASE_MS, 2 s in tests), not an entry that lives until the
 * request's deadline: a killed worker's attempt stops counting one lease later.
 */
describe('model pools: an attempt whose worker died stops counting in flight after its lease', () => {
  let o: TestOrg;
  let web: { child: ChildProcess; url: string };
  const leaseMs = () => config().poolInflightLeaseMs;
  before(async function () {
    this.timeout(30_000);
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
    web = await spawnWeb({ REQUEST_TIMEOUT_MS: '3000' });
  });
  after(() => kill(web.child));
  beforeEach(resetSim);

  it('keeps a running attempt counted past its lease (renewed), so max_concurrency holds for long answers', async function () {
    this.timeout(20_000);
    const one = simDeployment('one', { max_concurrency: 1, priority: 0 });
    const spare = simDeployment('spare', { priority: 1 });
    const model = await poolModel([one, spare]);
    env().sim.knobs.set(one.upstream, { hold: true });
    const long = chat(o.key, model);
    expect(await waitFor(() => env().sim.log.entries.length === 1)).to.equal(true);
    await new Promise((r) => setTimeout(r, leaseMs() * 1.5));
    expect((await poolStateOf(model, ['one']))[0].inFlight, 'still counted after 1.5 leases').to.equal(1);
    const other = await chat(o.key, model);
    expect(other.headers.get('x-service-deployment'), 'the full deployment is not called twice').to.equal('spare');
    env().sim.knobs.release();
    expect((await long).headers.get('x-service-deployment')).to.equal('one');
  });

  it('frees the deployment a killed worker held: the tier-0 deployment takes traffic again, not the spare', async function () {
    this.timeout(30_000);
    const one = simDeployment('one', { max_concurrency: 1, priority: 0 });
    const spare = simDeployment('spare', { priority: 1 });
    const model = await poolModel([one, spare]);
    const lost = await killedMidAttempt(o.key, model, one.upstream);
    expect(lost.status).to.equal(502);
    expect(lost.body.error.code).to.equal('worker_lost');
    expect(await waitFor(async () => (await poolStateOf(model, ['one']))[0].inFlight === 0, leaseMs() + 1000, 50), 'the dead attempt lapsed within a lease').to.equal(true);
    const r = await chat(o.key, model);
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-service-deployment')).to.equal('one');
  });

  it('a pool of one with max_concurrency 1 serves again after the crash instead of answering 429 until the deadline', async function () {
    this.timeout(30_000);
    const one = simDeployment('one', { max_concurrency: 1 });
    const model = await poolModel([one]);
    const lost = await killedMidAttempt(o.key, model, one.upstream);
    expect(lost.status).to.equal(502);
    // through the web process with a 3 s deadline: a slot still held by the dead attempt would answer 429
    for (let i = 0; i < 2; i++) {
      const r = await chat(o.key, model, web.url);
      expect(r.status, r.text).to.equal(200);
    }
    expect(env().sim.log.entries.length, 'the crashed attempt and two served').to.equal(3);
  });
});
