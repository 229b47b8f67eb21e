import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { roomInMinute, waitFor } from '../../helpers/wait';
import { hitsByUpstream, poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { PoolState } from '../../../shared/routing/pool-state';
import type { PoolDeployment, RouteStep } from '../../../shared/queues/payloads';
import { Model } from '../../../shared/db/models';
import { config } from '../../../shared/config/env';

const chat = (key: string, model: string) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'balance me' }] } });

const dep = (name: string, weight: number, priority = 0, limits: Partial<PoolDeployment> = {}): PoolDeployment => ({
  providerId: 'p',
  kind: 'openai',
  baseUrl: 'http://127.0.0.1:9',
  upstreamModel: name,
  name,
  weight,
  priority,
  rpm: null,
  tpm: null,
  maxConcurrency: null,
  ...limits,
});

/** Runs `n` calls of `fn`, at most `width` at a time. */
async function inWaves<T>(n: number, width: number, fn: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width) out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, fn))));
  return out;
}

describe('model pools: balancing and limits', () => {
  let o: TestOrg;
  let state: PoolState;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
    state = new PoolState(env().redis, { probeLeaseMs: 5000, inflightLeaseMs: 60_000, backoffBaseMs: 500, backoffMaxMs: 30_000 });
  });

  it('a pool of one without limits is picked in the same turn, without Redis; any other pool is not', async () => {
    const poolId = `one-${rndId()}`;
    const one: RouteStep = { poolId, model: 'm', fallback: false, deployments: [dep('solo', 1)] };
    const local = state.pickLocal(one, 12);
    expect(local).to.include({ kind: 'picked', index: 0, probe: false });
    expect((local as { lease: { local?: boolean; deployment: string; estimatedTokens: number } }).lease).to.include({ local: true, deployment: 'solo', estimatedTokens: 12 });
    expect(await env().redis.keys(`*${poolId}*`)).to.deep.equal([]); // nothing counted in Redis
    for (const limits of [{ rpm: 10 }, { tpm: 1000 }, { maxConcurrency: 2 }]) {
      expect(state.pickLocal({ ...one, deployments: [dep('solo', 1, 0, limits)] }, 0)).to.equal(undefined);
    }
    expect(state.pickLocal({ ...one, deployments: [dep('a', 1), dep('b', 1)] }, 0)).to.equal(undefined);
    expect(await state.pick(one, 'r1', 12)).to.deep.include({ kind: 'picked', index: 0 }); // pick agrees
  });

  it('picks by weight within the best priority tier over 1,000 picks (real Redis)', async function () {
    this.timeout(30_000);
    const step: RouteStep = { poolId: `w-${rndId()}`, model: 'm', fallback: false, deployments: [dep('a', 1), dep('b', 2), dep('c', 7), dep('backup', 100, 1)] };
    const counts: Record<string, number> = {};
    for (let i = 0; i < 1000; i++) {
      const p = await state.pick(step, `r${i}`, 0);
      if (p.kind !== 'picked') throw new Error(`not picked: ${p.kind}`);
      counts[step.deployments[p.index].name] = (counts[step.deployments[p.index].name] ?? 0) + 1;
      await state.settle(p.lease, 'up', undefined);
    }
    expect(counts.backup, 'a lower tier takes nothing while the best tier is healthy').to.equal(undefined);
    expect(counts.a / 1000).to.be.closeTo(0.1, 0.04);
    expect(counts.b / 1000).to.be.closeTo(0.2, 0.04);
    expect(counts.c / 1000).to.be.closeTo(0.7, 0.04);
  });

  it("a deployment past its cooldown takes one probe: a first attempt may be it, a retry is given a healthy deployment instead (the probe only when none is)", async () => {
    const quick = new PoolState(env().redis, { probeLeaseMs: 5000, inflightLeaseMs: 60_000, backoffBaseMs: 1, backoffMaxMs: 1 });
    const step: RouteStep = { poolId: `p-${rndId()}`, model: 'm', fallback: false, deployments: [dep('broken', 1), dep('fine', 1)] };
    const first = () => 0.1; // both draws name `broken` (the first half of the weights)
    const failed = await quick.pick(step, 'r0', 0, first);
    expect(failed).to.include({ kind: 'picked', index: 0 });
    await quick.settle((failed as { lease: Parameters<PoolState['settle']>[0] }).lease, 'down', undefined); // cooling for 1 ms
    await new Promise((r) => setTimeout(r, 20));
    const retry = await quick.pick(step, 'r1', 0, first, true);
    expect(retry, 'a retry goes to the healthy deployment').to.include({ kind: 'picked', index: 1, probe: false });
    const probe = await quick.pick(step, 'r2', 0, first);
    expect(probe, 'a first attempt may take the probe').to.include({ kind: 'picked', index: 0, probe: true });
    const alone: RouteStep = { poolId: `p-${rndId()}`, model: 'm', fallback: false, deployments: [dep('broken', 1), dep('off', 1, 0, { maxConcurrency: 1 })] };
    const held = await quick.pick(alone, 'h', 0, () => 0.9); // `off` at its limit
    expect(held).to.include({ index: 1 });
    const f2 = await quick.pick(alone, 'r3', 0, first);
    await quick.settle((f2 as { lease: Parameters<PoolState['settle']>[0] }).lease, 'down', undefined);
    await new Promise((r) => setTimeout(r, 20));
    expect(await quick.pick(alone, 'r4', 0, first, true), 'no healthy deployment: the retry takes the probe').to.include({ kind: 'picked', index: 0, probe: true });
  });

  it('prefers the deployment with fewer requests in flight (two choices), per unit of weight', async () => {
    const poolId = `l-${rndId()}`;
    // five attempts stay in flight on `busy` (a limit, so that even alone it is counted in Redis)...
    const busyOnly: RouteStep = { poolId, model: 'm', fallback: false, deployments: [dep('busy', 1, 0, { maxConcurrency: 100 })] };
    for (let i = 0; i < 5; i++) expect((await state.pick(busyOnly, `held${i}`, 0)).kind).to.equal('picked');
    // ...then, between it and an idle one of equal weight, it wins only when both draws name it (1 in 4)
    const both: RouteStep = { poolId, model: 'm', fallback: false, deployments: [dep('busy', 1), dep('idle', 1)] };
    let busy = 0;
    for (let i = 0; i < 100; i++) {
      const p = await state.pick(both, `r${i}`, 0);
      if (p.kind !== 'picked') throw new Error('not picked');
      if (p.index === 0) busy++;
      await state.settle(p.lease, 'up', undefined);
    }
    // about 25 of 100; independent weighted draws would give about 50
    expect(busy).to.be.within(5, 40);
  });

  it('keeps no routing state in Redis for a pool of one without limits (no round trip on the hot path)', async () => {
    const free = await poolModel([simDeployment('free')]);
    const limited = await poolModel([simDeployment('limited', { max_concurrency: 10 })]);
    for (const m of [free, limited]) expect((await chat(o.key, m)).status).to.equal(200);
    const keysOf = async (publicId: string) => {
      const id = (await Model.findOne({ where: { publicId } }))!.id;
      return env().redis.keys(`${config().redisPrefix}:pool:{${id}}:*`);
    };
    expect(await keysOf(free)).to.deep.equal([]);
    expect((await keysOf(limited)).length).to.be.above(0);
  });

  it('honours weights end to end (200 requests through the app and workers)', async function () {
    this.timeout(60_000);
    const heavy = simDeployment('heavy', { weight: 3 });
    const light = simDeployment('light', { weight: 1 });
    const model = await poolModel([heavy, light]);
    const replies = await inWaves(200, 4, () => chat(o.key, model));
    expect(replies.every((r) => r.status === 200)).to.equal(true);
    const hits = hitsByUpstream();
    expect(hits.get(heavy.upstream)! + hits.get(light.upstream)!).to.equal(200);
    expect(hits.get(heavy.upstream)! / 200).to.be.closeTo(0.75, 0.1);
    const named = replies.filter((r) => r.headers.get('x-service-deployment') === 'heavy').length;
    expect(named, 'the header names the deployment the upstream log shows').to.equal(hits.get(heavy.upstream));
  });

  it('spreads load by max_concurrency before the provider refuses, and queues when every deployment is full', async function () {
    this.timeout(30_000);
    const small = simDeployment('small', { priority: 0, max_concurrency: 2 });
    const big = simDeployment('big', { priority: 1, max_concurrency: 3 });
    const model = await poolModel([small, big]);
    env().sim.knobs.set(small.upstream, { hold: true });
    env().sim.knobs.set(big.upstream, { hold: true });
    const pending = Array.from({ length: 6 }, () => chat(o.key, model));
    expect(await waitFor(() => env().sim.log.entries.length >= 5, 5000)).to.equal(true);
    const hits = hitsByUpstream();
    expect(hits.get(small.upstream)).to.equal(2);
    expect(hits.get(big.upstream)).to.equal(3);
    expect(env().sim.log.entries, 'the sixth waits for a free slot').to.have.length(5);
    env().sim.knobs.release();
    expect(await waitFor(() => env().sim.log.entries.length === 6, 5000)).to.equal(true);
    env().sim.knobs.release();
    const replies = await Promise.all(pending);
    expect(replies.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
  });

  it('moves to the next deployment when one reaches its rpm', async function () {
    this.timeout(30_000);
    expect(await roomInMinute(), 'the six requests inside one minute window').to.equal(true);
    const capped = simDeployment('capped', { priority: 0, rpm: 3 });
    const rest = simDeployment('rest', { priority: 1 });
    const model = await poolModel([capped, rest]);
    for (let i = 0; i < 6; i++) expect((await chat(o.key, model)).status).to.equal(200);
    expect(hitsByUpstream().get(capped.upstream)).to.equal(3);
    expect(hitsByUpstream().get(rest.upstream)).to.equal(3);
  });

  it('counts tokens against tpm before the call (estimated) and corrects them from the usage the upstream reports', async function () {
    this.timeout(30_000);
    expect(await roomInMinute(), 'the eight requests inside one minute window').to.equal(true);
    const metered = simDeployment('metered', { priority: 0, tpm: 150 });
    const other = simDeployment('other', { priority: 1 });
    const model = await poolModel([metered, other]);
    const served: string[] = [];
    for (let i = 0; i < 8; i++) {
      // estimated at about 110 tokens (max_tokens 100 + the input); the simulator uses about 20
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, max_tokens: 100, messages: [{ role: 'user', content: 'count my tokens' }] } });
      expect(r.status).to.equal(200);
      served.push(r.headers.get('x-service-deployment')!);
    }
    // without the correction the second request (110 + 110 > 150) would already go elsewhere
    expect(served.slice(0, 2)).to.deep.equal(['metered', 'metered']);
    expect(served, 'once the minute is used up, load moves on').to.include('other');
  });
});
