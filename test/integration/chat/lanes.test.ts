import { expect } from 'chai';
import { config } from '../../../shared/config/env';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { percentile, waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { leasesFreed } from '../../helpers/leases';

const body = (model = 'sim-chat', content = 'lane test') => ({ model, messages: [{ role: 'user', content }] });
const chat = (key: string, model = 'sim-chat', content?: string) => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: body(model, content) });

describe('lanes, background work and fair share', () => {
  beforeEach(resetSim);

  it('runs -background on the background lane for an entitled org and reports the id sent', async () => {
    const o = await buildOrg(env().redis, { plan: 'pro' });
    const r = await chat(o.key, 'sim-chat-background');
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal('sim-chat-background');
    expect(env().sim.log.entries[0].model).to.equal('sim-chat-1');
    await usageSettled();
    const ev = await UsageEvent.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev!.lane).to.equal('background');
    expect(ev!.model).to.equal('sim-chat-background');
  });

  it('runs -background on the interactive lane for an org not entitled to background', async () => {
    const o = await buildOrg(env().redis, { plan: 'free' });
    const r = await chat(o.key, 'sim-chat-background');
    expect(r.status).to.equal(200);
    expect(r.body.model).to.equal('sim-chat-background');
    await usageSettled();
    const ev = await UsageEvent.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev!.lane).to.equal('interactive');
  });

  it('answers 429 CONCURRENT_REQUEST_LIMIT_EXCEEDED with Retry-After at the lane count, and bills nothing for it', async () => {
    const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 1 } });
    env().sim.knobs.set('sim-chat-1', { hold: true }); // the first request answers when released
    const first = chat(o.key);
    expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000), 'the first request is upstream').to.equal(true);
    expect(await env().gw.ctx.leases.count(o.org.id, 'chat', 'interactive'), 'and holds the lane').to.equal(1);
    const second = await chat(o.key);
    expect(second.status).to.equal(429);
    expect(second.body.error.code).to.equal('CONCURRENT_REQUEST_LIMIT_EXCEEDED');
    expect(Number(second.headers.get('retry-after'))).to.be.at.least(1);
    env().sim.knobs.release();
    expect((await first).status).to.equal(200);
    expect(env().sim.log.entries).to.have.length(1);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(1);
    // the lease was released when the first response ended: the next request is admitted
    env().sim.knobs.reset();
    expect((await chat(o.key)).status).to.equal(200);
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive')).to.equal(true);
  });

  it('sets Retry-After on a lane 429 from the lane\'s recent durations and the oldest lease\'s age, not the lease lifetime', async function () {
    this.timeout(20_000);
    const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 1 } });
    env().sim.knobs.set('sim-chat-1', { delayMs: 1200 });
    expect((await chat(o.key)).status).to.equal(200); // the lane's typical duration is now ~1.2 s
    const holding = chat(o.key);
    expect(await waitFor(() => env().sim.log.entries.length === 2, 3000), 'the holding request is upstream').to.equal(true);
    const refused = await chat(o.key);
    expect(refused.status).to.equal(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    // the lease lives LEASE_TTL_MS (5 s in tests, renewed); a slot frees in about a second
    expect(retryAfter, 'Retry-After (s)').to.be.within(1, 2);
    expect(retryAfter * 1000).to.be.below(config().leaseTtlMs);
    expect((await holding).status).to.equal(200);
    env().sim.knobs.reset();
  });

  it('serves a quiet org ahead of a flood it would wait behind under FIFO', async function () {
    this.timeout(120_000);
    const SAMPLES = 20; // the nearest-rank p95 of 20 samples is the 19th, not the maximum
    const WORKERS = config().chatInteractiveConcurrency;
    const flood = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 1000 } });
    const quiet = await buildOrg(env().redis);
    const queue = env().gw.ctx.queues.get('chat-interactive');
    env().sim.knobs.set('sim-chat-1', { delayMs: 100 });
    const log = env().sim.log.entries;

    const floodDone = Promise.all(Array.from({ length: 800 }, () => chat(flood.key)));
    const backlog = await waitFor(async () => (await queue.getPrioritizedCount()) > 200, 60_000);
    expect(backlog, 'the flood built a backlog').to.equal(true);
    // For each quiet request: the jobs queued when it was sent (its place under FIFO) and the
    // flood jobs that reached the upstream after it was sent and before it (its place in fact).
    const fifoPlace: number[] = [];
    const place: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const queued = await queue.getPrioritizedCount();
      const mark = log.length;
      const r = await chat(quiet.key, 'sim-chat', `quiet ${i}`);
      expect(r.status, r.text).to.equal(200);
      const at = log.findIndex((e, n) => n >= mark && (e.body as { messages: Array<{ content: string }> }).messages[0].content === `quiet ${i}`);
      expect(at, `quiet ${i} reached the upstream`).to.be.at.least(mark);
      fifoPlace.push(queued);
      place.push(at - mark);
    }
    const floodReplies = await floodDone;
    expect(floodReplies.every((r) => r.status === 200)).to.equal(true);

    const detail = `places ${place.join(',')}; FIFO places ${fifoPlace.join(',')}`;
    // with priority, only jobs the workers took while the quiet job was being queued go first...
    expect(percentile(place, 95), detail).to.be.at.most(2 * WORKERS);
    // ...while the backlog lasted the whole measurement, so FIFO would have put every sample far back
    expect(Math.min(...fifoPlace), detail).to.be.above(8 * WORKERS);
  });
});
