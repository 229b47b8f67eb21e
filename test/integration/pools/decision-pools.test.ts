import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { roomInMinute } from '../../helpers/wait';
import { hitsByUpstream, poolModel, refusingProvider, rndId, simDeployment } from '../../helpers/pool-models';
import { decide, expectBilledTo, expectRefused, validBody, walletOf } from '../systemone/helpers';
import { credit } from '../../../shared/billing/wallet';
import { Model } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { config } from '../../../shared/config/env';
import { buildDecisionPrompt } from '../../../shared/systemone/prompt';
import { targetOf } from '../../../api/dispatch/target';
import { taskRoute } from '../../../api/dispatch/route';
import { serveDecisionJob } from '../../../workers/pools/systemone.worker';
import { PoolState } from '../../../shared/routing/pool-state';
import { ROUTE_RESULT_KEY } from '../../../shared/queues/route-meta';
import { CancelSource } from '../../../shared/cancel-source';
import { NOOP } from '../../../shared/tracing/trace';
import type { DecisionRequest } from '../../../shared/systemone/types';
import type { SystemoneJob } from '../../../shared/queues/payloads';
import type { JobContext } from '../../../shared/queues/create-worker';
import type { DeploymentSpec } from '../../../shared/catalog/deployments';

/** A decision model's limits (required, fail-closed) with room for the helpers' valid body. */
const LIMITS = { max_state_bytes: 10_000, max_request_bytes: 100_000, max_questions: 8, max_input_tokens: 10_000 };

/** Decision models served by pools of deployments: balanced, failed over, the errors in the endpoint's codes, billed once. */
describe('model pools: decision models (POST /v1/systemone)', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { policies: { systemone: 'metered' }, laneOverrides: { 'systemone:interactive': 32 } });
    await credit(o.org.id, 50_000_000);
  });
  afterEach(async () => {
    expect((await walletOf(o.org.id)).reserved, 'no reservation left held').to.equal(0);
  });
  // the suite's models leave the catalog with it (model listings elsewhere count decision models)
  const made: string[] = [];
  const decisionPool = async (deployments: DeploymentSpec[], fallbacks?: string[]) => {
    const id = await poolModel(deployments, { capabilities: { decision: true }, limits: LIMITS, fallbacks });
    made.push(id);
    return id;
  };
  after(async () => {
    await Model.destroy({ where: { publicId: made } });
    await bumpEpoch(env().redis);
  });

  it('every request answered while one deployment refuses connections and another answers 500; the headers, the usage event, the log row and the charge name the one that served', async function () {
    this.timeout(30_000);
    const down = { name: 'down', provider: await refusingProvider(), upstream: 'nothing' };
    const failing = simDeployment('failing');
    const up = simDeployment('up');
    env().sim.knobs.set(failing.upstream, { status: 500 });
    const model = await decisionPool([down, failing, up]);
    const replies = await Promise.all(Array.from({ length: 10 }, () => decide(o.key, validBody({ model }))));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.model).to.equal(model);
      expect(r.body.answers.paid.type).to.equal('noul');
      expect(r.body, 'the route is not left in the body').to.not.have.property(ROUTE_RESULT_KEY);
      expect(r.headers.get('x-service-deployment')).to.equal('up');
      expect(Number(r.headers.get('x-service-attempts'))).to.be.within(1, 3);
    }
    expect(hitsByUpstream().get(failing.upstream) ?? 0, 'cooled down after its failures: not every request tried it').to.be.below(10);
    await expectBilledTo(replies[0], 'up');
  });

  it('weights are honoured between two healthy deployments (3:1 over 160 requests)', async function () {
    this.timeout(60_000);
    const heavy = simDeployment('heavy', { weight: 3 });
    const light = simDeployment('light', { weight: 1 });
    const model = await decisionPool([heavy, light]);
    for (let i = 0; i < 160; i += 16) {
      for (const r of await Promise.all(Array.from({ length: 16 }, () => decide(o.key, validBody({ model }))))) expect(r.status, r.text).to.equal(200);
    }
    const hits = hitsByUpstream();
    expect((hits.get(heavy.upstream) ?? 0) + (hits.get(light.upstream) ?? 0)).to.equal(160);
    expect((hits.get(heavy.upstream) ?? 0) / 160).to.be.within(0.62, 0.88);
  });

  it('every deployment failing: 502 systemone_backend_error after the attempt budget, nothing billed, and the model\'s fallbacks never used', async () => {
    const a = simDeployment('a');
    const b = simDeployment('b');
    env().sim.knobs.set(a.upstream, { status: 500 });
    env().sim.knobs.set(b.upstream, { status: 500 });
    const model = await decisionPool([a, b], ['sim-decide']);
    const before = await walletOf(o.org.id);
    const r = await decide(o.key, validBody({ model }));
    await expectRefused(r, 502, 'systemone_backend_error');
    expect(r.headers.get('x-service-attempts')).to.equal(String(config().poolMaxAttempts));
    expect(r.headers.get('x-service-deployment')).to.be.oneOf(['a', 'b']);
    expect(hitsByUpstream().get('sim-chat-1') ?? 0, 'no fallback to another decision model').to.equal(0);
    expect((hitsByUpstream().get(a.upstream) ?? 0) + (hitsByUpstream().get(b.upstream) ?? 0)).to.equal(config().poolMaxAttempts);
    expect(await walletOf(o.org.id)).to.deep.equal(before);
  });

  it('rate-limited everywhere: 429 systemone_backend_busy with the upstream\'s Retry-After, then, while every deployment cools down, 429 systemone_backend_busy with the cooldown left, at once and with no upstream call', async function () {
    this.timeout(20_000);
    const a = simDeployment('a');
    const b = simDeployment('b');
    env().sim.knobs.set(a.upstream, { status: 429, retryAfter: 8 });
    env().sim.knobs.set(b.upstream, { status: 429, retryAfter: 8 });
    const model = await decisionPool([a, b]);
    const first = await decide(o.key, validBody({ model }));
    await expectRefused(first, 429, 'systemone_backend_busy');
    expect(first.headers.get('retry-after')).to.equal('8');
    expect(first.headers.get('x-service-attempts'), 'each deployment once').to.equal('2');
    const t = Date.now();
    const second = await decide(o.key, validBody({ model }));
    expect(Date.now() - t, 'not held for the 8 s cooldown').to.be.below(2000);
    await expectRefused(second, 429, 'systemone_backend_busy');
    expect(Number(second.headers.get('retry-after')), 'the cooldown left').to.be.within(6, 8);
    expect(second.headers.get('x-service-deployment'), 'no attempt was made').to.equal(null);
    expect((hitsByUpstream().get(a.upstream) ?? 0) + (hitsByUpstream().get(b.upstream) ?? 0), 'no call during the cooldown').to.equal(2);
  });

  it('every deployment at its rpm: 429 systemone_backend_busy before the deadline (not the chat lane\'s CONCURRENT_REQUEST_LIMIT_EXCEEDED)', async function () {
    this.timeout(30_000);
    expect(await roomInMinute(15_000), 'the three requests inside one minute window').to.equal(true);
    const a = simDeployment('a', { rpm: 1 });
    const b = simDeployment('b', { rpm: 1 });
    const model = await decisionPool([a, b]);
    const served = [await decide(o.key, validBody({ model })), await decide(o.key, validBody({ model }))];
    expect(served.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(served.map((r) => r.headers.get('x-service-deployment')).sort()).to.deep.equal(['a', 'b']);
    const t = Date.now();
    const r = await decide(o.key, validBody({ model }));
    await expectRefused(r, 429, 'systemone_backend_busy');
    expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
    // the minute cannot turn before the deadline (15 s of it left, a 5 s deadline): answered at once,
    // not held to the deadline's margin (which on a loaded machine came after the pod's own: 504)
    expect(Date.now() - t, 'answered at once, well before the pod\'s deadline').to.be.below(config().systemoneTimeoutMs / 2);
    expect(Number(r.headers.get('retry-after')), 'the seconds until the minute turns').to.be.at.most(60);
    expect(env().sim.log.entries, 'no deployment called past its rpm').to.have.length(2);
  });

  it('a non-retryable upstream answer (400) and an unusable answer are each answered after one attempt, not retried', async () => {
    const a = simDeployment('a');
    const b = simDeployment('b');
    const model = await decisionPool([a, b]);
    for (const knobs of [{ status: 400 }, { badDecision: 'not_json' as const }]) {
      resetSim();
      env().sim.knobs.set(a.upstream, knobs);
      env().sim.knobs.set(b.upstream, knobs);
      const r = await decide(o.key, validBody({ model }));
      await expectRefused(r, 502, 'systemone_backend_error');
      expect(r.headers.get('x-service-attempts'), JSON.stringify(knobs)).to.equal('1');
      expect(env().sim.log.entries, JSON.stringify(knobs)).to.have.length(1);
    }
  });

  it('rolling deploys: a job from an older pod (no route) is served from its target, and its answer carries no route key', async () => {
    const only = simDeployment('only');
    const model = await decisionPool([only]);
    const m = (await env().gw.ctx.catalog.get(model))!;
    const built = buildDecisionPrompt(validBody({ model }) as unknown as DecisionRequest, { logprobs: true, maxOutputTokens: null });
    const job = (requestId: string) => ({ requestId, replyTo: `old-pod-${rndId()}`, deadline: Date.now() + 10_000, orgId: o.org.id, projectId: null, apiKeyId: null, publicModel: model,
      lane: 'interactive', stream: false, target: targetOf(m), body: built.body, plan: built.plan, images: 0, billing: { mode: 'included' as const, inputTokenMicros: 0 } }) as SystemoneJob;
    const ctx = { signal: new CancelSource(), emit: () => undefined, usage: () => undefined, span: NOOP, route: () => undefined } as unknown as JobContext;
    const state = new PoolState(env().redis, { probeLeaseMs: 5000, inflightLeaseMs: 60_000, backoffBaseMs: 500, backoffMaxMs: 30_000 });
    const old = await serveDecisionJob(env().redis, state, job(`req_${rndId()}`), ctx);
    expect(old.answers).to.have.property('paid');
    expect(old, 'no route key for an older pod').to.not.have.property(ROUTE_RESULT_KEY);
    const current = await serveDecisionJob(env().redis, state, Object.assign(job(`req_${rndId()}`), { route: taskRoute(m, 'decision') }), ctx);
    expect((current as unknown as Record<string, unknown>)[ROUTE_RESULT_KEY]).to.deep.include({ deployment: 'only', attempts: 1 });
    expect(hitsByUpstream().get(only.upstream)).to.equal(2);
  });
});
