import { expect } from 'chai';
import crypto from 'crypto';
import type { ChildProcess } from 'child_process';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { childChatWorker } from '../../helpers/child-worker';
import { kill, spawnWeb } from '../../helpers/processes';
import { poolModel, simDeployment } from '../../helpers/pool-models';
import { replyChannelsOf, routeReports, type RouteReports } from '../../helpers/route-reports';
import { db } from '../../../shared/db/sequelize';
import { usageSettled } from '../../helpers/usage';
import type { DeploymentSpec } from '../../../shared/catalog/deployments';

const chat = (key: string, model: string, base?: string) =>
  call('POST', '/v1/chat/completions', { base, headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'where am I served?' }] } });

/** A pool of two held deployments: which one takes the attempt is the router's draw, unknown to the pod. */
async function heldPool(): Promise<{ model: string; deployments: DeploymentSpec[] }> {
  const deployments = [simDeployment('a'), simDeployment('b')];
  for (const d of deployments) env().sim.knobs.set(d.upstream, { hold: true });
  return { model: await poolModel(deployments), deployments };
}

/** The failed request's log row (written by its pod): deployment and attempts. */
async function logRow(requestId: string | null): Promise<Array<[string | null, number]>> {
  await usageSettled();
  const rows = await db().query<{ deployment: string | null; attempts: number }>('SELECT deployment, attempts FROM request_logs WHERE request_id = :id', { type: QueryTypes.SELECT, replacements: { id: requestId } });
  return rows.map((x) => [x.deployment, x.attempts]);
}

/**
 * Answers the pod gives without its worker (its own 504 when it wins the deadline race, 502
 * worker_lost when the worker died) name the route the worker reported while its attempt ran
 * (shared/queues/route-report.ts): the attempt's deployment and attempt count, as every other routed
 * failure does. A request answered fast sends no report at all.
 */
describe('model pools: x-service-* headers on the answers the pod gives without the worker', () => {
  let o: TestOrg;
  let reports: RouteReports | undefined;
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
  });
  beforeEach(resetSim);
  afterEach(() => {
    reports?.close();
    reports = undefined;
  });

  /**
   * Sends the request through `base` to a child chat worker and waits until it is upstream and its
   * route reported; the caller then acts on the worker and brings the in-process pools back (`restore`).
   */
  async function upstreamAndReported(channels: string[], model: string, base?: string): Promise<{ pending: Promise<Reply>; reported: string; child: ChildProcess; restore(): Promise<void> }> {
    reports = await routeReports(channels);
    const w = await childChatWorker();
    try {
      const pending = chat(o.key, model, base);
      expect(await waitFor(() => env().sim.log.entries.length === 1), 'the attempt is upstream').to.equal(true);
      expect(await waitFor(() => reports!.seen.length === 1, 10_000), 'the worker reported its route').to.equal(true);
      return { pending, reported: reports.seen[0].route.deployment, ...w };
    } catch (err) {
      await w.restore();
      throw err;
    }
  }

  it('502 worker_lost names the deployment and attempts the worker reported before it died', async function () {
    this.timeout(30_000);
    const { model, deployments } = await heldPool();
    const { pending, reported, child, restore } = await upstreamAndReported([...env().gw.ctx.replies.channels], model);
    child.kill('SIGKILL');
    await restore(); // the in-process workers find the dead worker's job stalled and fail it
    const r = await pending;
    expect(r.status, r.text).to.equal(502);
    expect(r.body.error.code).to.equal('worker_lost');
    const upstream = env().sim.log.entries[0].model;
    expect(deployments.find((d) => d.name === reported)?.upstream, 'the report named the deployment called').to.equal(upstream);
    expect(r.headers.get('x-service-deployment')).to.equal(reported);
    expect(r.headers.get('x-service-attempts')).to.equal('1');
    expect(r.headers.get('x-service-fallback-model')).to.equal(null);
    expect(await logRow(r.headers.get('x-service-request-id')), 'the failed request’s log row names them too').to.deep.equal([[reported, 1]]);
  });

  describe('through a web process with a 3 s deadline', () => {
    const podId = `route-report-pod-${crypto.randomBytes(3).toString('hex')}`;
    let web: { child: ChildProcess; url: string };
    before(async function () {
      this.timeout(30_000);
      web = await spawnWeb({ REQUEST_TIMEOUT_MS: '3000', POD_ID: podId });
    });
    after(() => kill(web.child));

    it("the pod's own 504 (its worker frozen past the deadline) names the deployment and attempts the worker reported", async function () {
      this.timeout(30_000);
      const { model } = await heldPool();
      const { pending, reported, child, restore } = await upstreamAndReported(replyChannelsOf(podId), model, web.url);
      // a stopped worker cannot answer at the deadline (and no other worker fails its job): the pod wins the race and answers 504 itself
      child.kill('SIGSTOP');
      const r = await pending.finally(restore);
      expect(r.status, r.text).to.equal(504);
      expect(r.body.error.code).to.equal('deadline_exceeded');
      expect(r.headers.get('x-service-deployment')).to.equal(reported);
      expect(r.headers.get('x-service-attempts')).to.equal('1');
      expect(await logRow(r.headers.get('x-service-request-id'))).to.deep.equal([[reported, 1]]);
    });
  });

  it('a request answered within the report delay sends no route report (no message more on the hot path)', async () => {
    reports = await routeReports([...env().gw.ctx.replies.channels]);
    const model = await poolModel([simDeployment('a'), simDeployment('b')]);
    for (const stream of [false, true]) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, stream, messages: [{ role: 'user', content: 'fast' }] } });
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-deployment')).to.match(/^[ab]$/);
    }
    expect(await reports.caughtUp(env().redis), 'every message published before now has arrived').to.equal(true);
    expect(reports.seen).to.deep.equal([]);
  });
});
