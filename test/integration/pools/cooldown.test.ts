import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { hitsByUpstream, poolModel, poolStateOf, simDeployment } from '../../helpers/pool-models';
import { config } from '../../../shared/config/env';

const chat = (key: string, model: string) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'cooldown' }] } });

describe('model pools: a pool whose every deployment is cooling down', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
  });

  it('answers at once, with the Retry-After, when the cooldown is longer than POOL_RETRY_WAIT_MAX_MS (2 s), instead of holding the request', async function () {
    this.timeout(20_000);
    const a = simDeployment('a');
    const b = simDeployment('b');
    const model = await poolModel([a, b]);
    env().sim.knobs.set(a.upstream, { status: 429, retryAfter: 8 });
    env().sim.knobs.set(b.upstream, { status: 429, retryAfter: 8 });
    let t = Date.now();
    const first = await chat(o.key, model);
    expect(Date.now() - t, 'not held for the 8 s cooldown').to.be.below(2000);
    expect(first.status, first.text).to.equal(429);
    expect(first.body.error.code).to.equal('upstream_rate_limited');
    expect(first.headers.get('retry-after')).to.equal('8');
    expect(first.headers.get('x-service-attempts'), 'each deployment once').to.equal('2');
    t = Date.now();
    const second = await chat(o.key, model);
    expect(Date.now() - t, 'not held either').to.be.below(2000);
    expect(second.status, second.text).to.equal(503);
    expect(second.body.error.code).to.equal('upstream_unavailable');
    expect(Number(second.headers.get('retry-after')), 'the cooldown left').to.be.within(6, 8);
    expect((hitsByUpstream().get(a.upstream) ?? 0) + (hitsByUpstream().get(b.upstream) ?? 0), 'no call during the cooldown').to.equal(2);
  });

  it('waits out a cooldown of at most POOL_RETRY_WAIT_MAX_MS and serves from the deployment it probes', async function () {
    this.timeout(20_000);
    const a = simDeployment('a');
    const b = simDeployment('b');
    const model = await poolModel([a, b]);
    env().sim.knobs.set(a.upstream, { status: 503, statusTimes: 1, retryAfter: 1 });
    env().sim.knobs.set(b.upstream, { status: 503, statusTimes: 1, retryAfter: 1 });
    const t = Date.now();
    const r = await chat(o.key, model);
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-service-attempts')).to.equal('3');
    expect(Date.now() - t, 'it waited for the 1 s cooldown').to.be.at.least(900);
  });
});

describe('model pools: one incident, one failure; one probe at a time', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
  });

  it('counts a burst of attempts in flight that all fail as one failure: the first cooldown is POOL_BACKOFF_BASE_MS', async function () {
    this.timeout(20_000);
    const a = simDeployment('a', { priority: 0 });
    const b = simDeployment('b', { priority: 1 });
    const model = await poolModel([a, b]);
    env().sim.knobs.set(a.upstream, { hold: true, status: 503 });
    const burst = Array.from({ length: 6 }, () => chat(o.key, model));
    expect(await waitFor(() => hitsByUpstream().get(a.upstream) === 6)).to.equal(true);
    env().sim.knobs.release();
    for (const r of await Promise.all(burst)) expect(r.headers.get('x-service-deployment'), r.text).to.equal('b');
    const [s] = await poolStateOf(model, ['a']);
    expect(s.fails, 'six attempts of one incident').to.equal(1);
    expect(s.coolingForMs).to.be.at.most(config().poolBackoffBaseMs);
  });

  it('cancelling an attempt that is not the probe leaves the probe lease alone: no second probe goes out', async function () {
    this.timeout(20_000);
    const a = simDeployment('a', { priority: 0 });
    const b = simDeployment('b', { priority: 1 });
    const model = await poolModel([a, b]);
    env().sim.knobs.set(a.upstream, { hold: true });
    const old = new AbortController();
    const cancelled = fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      signal: old.signal,
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'old attempt' }] }),
    }).catch((e) => e);
    const later: Array<Promise<unknown>> = [cancelled];
    try {
      expect(await waitFor(() => hitsByUpstream().get(a.upstream) === 1)).to.equal(true);
      // a fails (1 s cooldown) while the old attempt is still upstream; b serves
      env().sim.knobs.set(a.upstream, { status: 503, retryAfter: 1 });
      expect((await chat(o.key, model)).headers.get('x-service-deployment')).to.equal('b');
      expect(await waitFor(async () => (await poolStateOf(model, ['a']))[0].coolingForMs === 0, 5000, 50)).to.equal(true);
      // the probe, held upstream
      env().sim.knobs.set(a.upstream, { hold: true });
      later.push(chat(o.key, model));
      expect(await waitFor(() => hitsByUpstream().get(a.upstream) === 3)).to.equal(true);
      old.abort();
      expect(await waitFor(async () => (await poolStateOf(model, ['a']))[0].inFlight === 1, 5000, 50), 'the old attempt settled').to.equal(true);
      expect((await poolStateOf(model, ['a']))[0].probing, 'the probe is still the only one').to.equal(true);
      const next = await chat(o.key, model);
      expect(next.headers.get('x-service-deployment')).to.equal('b');
      expect(hitsByUpstream().get(a.upstream), 'the old attempt, the failure, one probe').to.equal(3);
    } finally {
      // released until every held request has answered (one that reaches the simulator after a release waits for the next)
      const all = Promise.all(later).then(() => true);
      do env().sim.knobs.release();
      while (!(await Promise.race([all, new Promise<boolean>((r) => setTimeout(() => r(false), 200))])));
    }
  });
});
