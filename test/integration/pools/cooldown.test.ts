import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { hitsByUpstream, poolModel, simDeployment } from '../../helpers/pool-models';

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
