import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { roomInMinute, waitFor } from '../../helpers/wait';
import { childChatWorkers } from '../../helpers/child-worker';
import { hitsByUpstream, poolModel, refusingProvider, simDeployment } from '../../helpers/pool-models';
import { Model, UsageEvent } from '../../../shared/db/models';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { registry } from '../../../shared/metrics';
import { PoolState } from '../../../shared/routing/pool-state';

const chat = (key: string, model: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'pool test' }], ...extra } });

async function usageOf(r: Reply): Promise<UsageEvent[]> {
  await usageSettled();
  return UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
}

describe('model pools: health, retries and failover through the real app and workers', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
  });

  it('a retry is not spent on a probe while a healthy deployment remains: bursts against two broken deployments (refused, 500) and one good one are all answered', async function () {
    this.timeout(30_000);
    for (let round = 0; round < 3; round++) {
      const failing = simDeployment('failing');
      env().sim.knobs.set(failing.upstream, { status: 500 });
      const model = await poolModel([{ name: 'down', provider: await refusingProvider(), upstream: 'nothing' }, failing, simDeployment('up')]);
      const replies = await Promise.all(Array.from({ length: 12 }, () => chat(o.key, model)));
      expect(replies.map((r) => r.status), `round ${round}`).to.deep.equal(replies.map(() => 200));
      for (const r of replies) expect(r.headers.get('x-service-deployment')).to.equal('up');
    }
    env().sim.knobs.reset();
  });

  it('answers every request while one of two deployments refuses connections; one usage event each, naming the deployment that served', async () => {
    const down = { name: 'down', provider: await refusingProvider(), upstream: 'nothing' };
    const up = simDeployment('up');
    const model = await poolModel([down, up]);
    const replies = await Promise.all(Array.from({ length: 20 }, () => chat(o.key, model)));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.model).to.equal(model);
      expect(r.headers.get('x-service-deployment')).to.equal('up');
    }
    const attempts = replies.map((r) => Number(r.headers.get('x-service-attempts')));
    expect(Math.max(...attempts), 'a request that met the refusing deployment was retried on the other').to.be.at.most(2);
    expect(hitsByUpstream().get(up.upstream)).to.equal(20);
    for (const r of replies) {
      const rows = await usageOf(r);
      expect(rows, 'exactly one usage event per delivered request').to.have.length(1);
      expect(rows[0].deployment).to.equal('up');
      expect(rows[0].inputTokens).to.equal(r.body.usage.prompt_tokens);
    }
  });

  it('retries a 429 / 500 on the other deployment at once, streamed and JSON, with the headers on both', async function () {
    this.timeout(45_000);
    const busy = simDeployment('busy', { priority: 0 });
    const spare = simDeployment('spare', { priority: 1 });
    const model = await poolModel([busy, spare]);
    env().sim.knobs.set(busy.upstream, { status: 429, retryAfter: 30 });
    // rpm_used counts a fixed minute: start clear of its end so the three requests and the state read share one
    expect(await roomInMinute(15_000)).to.equal(true);
    const t = Date.now();
    const r = await chat(o.key, model);
    expect(r.status, r.text).to.equal(200);
    expect(Date.now() - t, 'not waiting out the Retry-After: another deployment was free').to.be.below(3000);
    expect(r.headers.get('x-service-deployment')).to.equal('spare');
    expect(r.headers.get('x-service-attempts')).to.equal('2');

    const s = await postSse('/v1/chat/completions', keyHeader(o.key), { model, stream: true, messages: [{ role: 'user', content: 'stream me' }] });
    expect(s.status).to.equal(200);
    expect(s.events.at(-1)!.data).to.equal('[DONE]');
    expect(s.events[0].data.model).to.equal(model);
    // busy is cooling for 30 s (its Retry-After): this one went straight to spare
    expect(hitsByUpstream().get(busy.upstream)).to.equal(1);
    const headers = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(headers.headers.get('x-service-deployment')).to.equal('spare');
    expect(headers.headers.get('x-service-attempts')).to.equal('1');
    await headers.text();
    const rows = await usageOf(r);
    expect(rows).to.have.length(1);
    expect(rows[0].deployment).to.equal('spare');

    // the operator sees it: live state in the management API, failures in the metrics
    const admin = await startAdmin();
    try {
      const { key } = await buildPlatformKey(['inference-models:read']);
      const id = (await Model.findOne({ where: { publicId: model } }))!.id;
      const st = await adminCall(admin.url, key, 'GET', `/admin/v1/inference-model-pools/${id}/state`);
      expect(st.status, st.text).to.equal(200);
      const [b, sp] = st.body.deployments;
      expect(b).to.deep.include({ name: 'busy', health: 'cooling_down', consecutive_failures: 1, in_flight: 0 });
      expect(b.cooldown_remaining_ms).to.be.within(20_000, 30_000);
      expect(sp).to.deep.include({ name: 'spare', health: 'healthy', consecutive_failures: 0 });
      expect(sp.rpm_used).to.be.at.least(3);
    } finally {
      await admin.close();
    }
    const metrics = await registry.getSingleMetricAsString('gateway_deployment_failures_total');
    expect(metrics).to.include(`model="${model}",deployment="busy",class="status_429"} 1`);
    // the routing metrics of the three answers (spare served each, busy's 429 cooled it)
    const text = (name: string) => registry.getSingleMetricAsString(name);
    expect(await text('gateway_deployment_attempts_total')).to.include(`{model="${model}",deployment="spare",outcome="ok"} 3`);
    expect(await text('gateway_deployment_attempt_duration_seconds')).to.include(`_count{model="${model}",deployment="spare"} 3`);
    expect(await text('gateway_request_upstream_attempts')).to.include(`_count{model="${model}"} 3`);
    const cooldown = (await text('gateway_deployment_cooldown_until_seconds')).split('\n');
    expect(cooldown, 'spare healthy').to.include(`gateway_deployment_cooldown_until_seconds{model="${model}",deployment="spare"} 0`);
    const busyUntil = cooldown.find((l) => l.includes(`{model="${model}",deployment="busy"}`));
    expect(Number(busyUntil?.split(' ').pop()), 'busy cooling until about 30 s on').to.be.within(Date.now() / 1000 + 15, Date.now() / 1000 + 31);
  });

  it('returns a non-retryable upstream 400 as it is, after one attempt, billing nothing', async () => {
    const a = simDeployment('a');
    const b = simDeployment('b');
    const model = await poolModel([a, b]);
    env().sim.knobs.set(a.upstream, { status: 400 });
    env().sim.knobs.set(b.upstream, { status: 400 });
    const r = await chat(o.key, model);
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('upstream_invalid_request');
    expect(r.headers.get('x-service-attempts')).to.equal('1');
    expect(env().sim.log.entries).to.have.length(1);
    expect(await usageOf(r)).to.have.length(0);
  });

  it('does not retry a stream that failed after its first byte', async () => {
    const flaky = simDeployment('flaky', { priority: 0 });
    const other = simDeployment('other', { priority: 1 });
    const model = await poolModel([flaky, other]);
    env().sim.knobs.set(flaky.upstream, { dropAfterChunks: 2 });
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), { model, stream: true, messages: [{ role: 'user', content: 'one two three four five six' }] });
    expect(s.status).to.equal(200);
    const last = s.events.at(-1)!.data;
    expect(last.error, 'the failure is reported in-band').to.be.an('object');
    expect(hitsByUpstream().get(flaky.upstream)).to.equal(1);
    expect(hitsByUpstream().has(other.upstream), 'never replayed on another deployment').to.equal(false);
  });

  it('a deployment in cooldown gets no request from either of two worker processes, then exactly one probe', async function () {
    this.timeout(60_000);
    const sick = simDeployment('sick', { priority: 0 });
    const well = simDeployment('well', { priority: 1 });
    const model = await poolModel([sick, well]);
    env().sim.knobs.set(sick.upstream, { status: 503, retryAfter: 8 });
    const workers = await childChatWorkers(2);
    try {
      const first = await chat(o.key, model);
      expect(first.status, first.text).to.equal(200);
      expect(first.headers.get('x-service-attempts')).to.equal('2');
      const cooledAt = Date.now();
      // 40 requests spread over both workers while sick cools down (8 s Retry-After)
      const during = await Promise.all(Array.from({ length: 40 }, () => chat(o.key, model)));
      expect(Date.now() - cooledAt, 'all of them inside the cooldown').to.be.below(8000);
      expect(during.every((r) => r.status === 200 && r.headers.get('x-service-deployment') === 'well')).to.equal(true);
      expect(hitsByUpstream().get(sick.upstream), 'no traffic during the cooldown').to.equal(1);
      // once the cooldown is over, concurrent requests send it exactly one probe (still failing: cooling again)
      const row = await Model.findOne({ where: { publicId: model } });
      const state = new PoolState(env().redis, { probeLeaseMs: 5000, inflightLeaseMs: 60_000, backoffBaseMs: 500, backoffMaxMs: 30_000 });
      expect(await waitFor(async () => (await state.inspect(row!.id, ['sick']))[0].coolingForMs === 0, 10_000, 50)).to.equal(true);
      const after = await Promise.all(Array.from({ length: 12 }, () => chat(o.key, model)));
      expect(after.every((r) => r.status === 200)).to.equal(true);
      expect(hitsByUpstream().get(sick.upstream), 'one probe, from one worker').to.equal(2);
    } finally {
      await workers.restore();
    }
  });

  it('a streamed probe brings the deployment back at its first chunk, not when the stream ends', async function () {
    this.timeout(20_000);
    const back = simDeployment('back', { priority: 0 });
    const stand = simDeployment('stand', { priority: 1 });
    const model = await poolModel([back, stand]);
    env().sim.knobs.set(back.upstream, { status: 503, statusTimes: 1, retryAfter: 1 });
    expect((await chat(o.key, model)).headers.get('x-service-deployment')).to.equal('stand');
    const id = (await Model.findOne({ where: { publicId: model } }))!.id;
    const state = new PoolState(env().redis, { probeLeaseMs: 5000, inflightLeaseMs: 60_000, backoffBaseMs: 500, backoffMaxMs: 30_000 });
    expect(await waitFor(async () => (await state.inspect(id, ['back']))[0].coolingForMs === 0, 5000, 50)).to.equal(true);
    env().sim.knobs.set(back.upstream, { tokenDelayMs: 150 });
    const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'a slow probe stream with many words in it' }] }),
    });
    expect(res.headers.get('x-service-deployment'), 'the probe').to.equal('back');
    const reader = res.body!.getReader();
    await reader.read(); // the first chunk is here; the stream goes on for about two seconds
    const [s] = await state.inspect(id, ['back']);
    expect(s).to.deep.include({ fails: 0, probing: false, inFlight: 1 });
    env().sim.knobs.set(back.upstream, {});
    const next = await chat(o.key, model);
    expect(next.headers.get('x-service-deployment'), 'back takes traffic while the probe still streams').to.equal('back');
    while (!(await reader.read()).done) {
      /* drain */
    }
  });

  it('fails over from an upstream that hangs before its first byte (POOL_FIRST_BYTE_TIMEOUT_MS)', async function () {
    this.timeout(30_000);
    const stuck = simDeployment('stuck', { priority: 0 });
    const ok = simDeployment('ok', { priority: 1 });
    const model = await poolModel([stuck, ok]);
    env().sim.knobs.set(stuck.upstream, { hang: true });
    const workers = await childChatWorkers(1, { POOL_FIRST_BYTE_TIMEOUT_MS: '300' });
    try {
      const t = Date.now();
      const r = await chat(o.key, model);
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-deployment')).to.equal('ok');
      expect(r.headers.get('x-service-attempts')).to.equal('2');
      expect(Date.now() - t).to.be.below(3000);
      expect(await waitFor(() => env().sim.log.entries.find((e) => e.model === stuck.upstream)?.aborted)).to.equal(true);
    } finally {
      await workers.restore();
    }
  });
});
