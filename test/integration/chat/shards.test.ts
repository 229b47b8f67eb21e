import { expect } from 'chai';
import type { Worker } from 'bullmq';
import { config } from '../../../shared/config/env';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { percentile, waitFor } from '../../helpers/wait';
import { leasesFreed } from '../../helpers/leases';
import { usageSettled } from '../../helpers/usage';
import { pools, poolsWithSettings } from '../../helpers/pools';
import { childChatWorkers } from '../../helpers/child-worker';
import { UsageEvent } from '../../../shared/db/models';
import { cancelJob } from '../../../shared/queues/cancel';
import { shardsOf } from '../../../shared/queues/shards';
import { completedIn } from '../../helpers/completed-jobs';
import { startGateway } from '../../helpers/harness';
import { buildPlatformKey, startAdmin } from '../../helpers/admin';
import { schedulerRows } from '../../helpers/scheduler';

const QUEUE = 'chat-interactive' as const;
const chat = (key: string, content = 'shard test') =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', messages: [{ role: 'user', content }] } });
const requestId = (r: Reply) => r.headers.get('x-service-request-id')!;
const queues = () => env().gw.ctx.queues;

/** The shard (BullMQ queue name) holding a job, or that completed it (a completed job is removed at once), if one does. */
async function shardHolding(id: string): Promise<string | undefined> {
  for (const q of queues().shards(QUEUE)) if (await q.getJob(id)) return q.name;
  return completedIn(env().redis, queues().shards(QUEUE), id);
}

/** The org's jobs not finished yet (or only those running), over every shard, with the shard each is on and the worker running it. */
async function openJobs(orgId: string, states: Array<'active' | 'prioritized' | 'waiting'> = ['active', 'prioritized', 'waiting']): Promise<Array<{ id: string; shard: string; priority: number; processedBy?: string }>> {
  const per = await Promise.all(
    queues()
      .shards(QUEUE)
      .map(async (q) => (await q.getJobs(states)).filter((j) => j?.data.orgId === orgId).map((j) => ({ id: j.id!, shard: q.name, priority: j.opts.priority ?? 0, processedBy: j.processedBy }))),
  );
  return per.flat();
}

describe('a chat queue in two shards (QUEUE_SHARDS_CHAT=2) on one Redis', () => {
  // without express slots: an org with few jobs in flight would go to the express queue, which is
  // not sharded (shared/queues/express.ts; test/integration/scheduler/express-slots.test.ts)
  poolsWithSettings({ QUEUE_SHARDS_CHAT: '2', CHAT_EXPRESS_CONCURRENCY: '0' });
  before(async () => {
    const share = async () => (await env().gw.ctx.express.refresh(), env().gw.ctx.express.shareOf(QUEUE).share);
    expect(await waitFor(async () => (await share()) === 0, 5000), 'no express share left').to.equal(true);
  });
  beforeEach(resetSim);

  it('spreads one org’s requests over both shards, answers each from the shard it is on, and bills each once', async () => {
    const o = await buildOrg(env().redis);
    const replies: Reply[] = [];
    const shards = new Map<string, number>();
    for (let i = 0; i < 40 && !(shards.size === 2 && Math.min(...shards.values()) >= 3); i++) {
      const r = await chat(o.key);
      expect(r.status, r.text).to.equal(200);
      replies.push(r);
      const shard = await shardHolding(requestId(r)); // the job itself is removed on completion
      expect(shard, `job ${requestId(r)} is on a shard`).to.be.a('string');
      shards.set(shard!, (shards.get(shard!) ?? 0) + 1);
    }
    expect([...shards.keys()].sort(), `jobs per shard ${JSON.stringify([...shards])}`).to.deep.equal(['chat-interactive', 'chat-interactive-1']);
    expect(Math.min(...shards.values())).to.be.at.least(3);
    await usageSettled();
    expect((await UsageEvent.findAll({ where: { orgId: o.org.id } })).map((e) => e.requestId).sort()).to.deep.equal(replies.map(requestId).sort());
    const counts = await queues().jobCounts(QUEUE, 'completed');
    expect(counts.completed, 'completed jobs are removed at once (their answers are kept apart)').to.equal(0);
  });

  it('gives each job a priority from the org’s outstanding requests over both shards, and holds the lane cap across them', async function () {
    this.timeout(40_000);
    const cap = 12;
    const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': cap } });
    env().sim.knobs.set('sim-chat-1', { hold: true });
    const pending: Array<Promise<Reply>> = [];
    try {
      // one at a time, each added before the next is sent, so each one's weight is exact
      for (let i = 0; i < cap; i++) {
        pending.push(chat(o.key, `held ${i}`));
        expect(await waitFor(async () => (await openJobs(o.org.id)).length === i + 1, 5000), `job ${i} queued`).to.equal(true);
      }
      const jobs = await openJobs(o.org.id);
      const onShard = (s: string) => jobs.filter((j) => j.shard === s).length;
      expect(onShard('chat-interactive') * onShard('chat-interactive-1'), `jobs per shard: ${onShard('chat-interactive')}/${onShard('chat-interactive-1')}`).to.be.above(0);
      // priority = 1 + the org's leases before this one, counted over both shards: 1..cap, none repeated
      expect(jobs.map((j) => j.priority).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: cap }, (_, i) => i + 1));
      const refused = await chat(o.key, 'over the cap');
      expect(refused.status, refused.text).to.equal(429);
      expect(refused.body.error.code).to.equal('CONCURRENT_REQUEST_LIMIT_EXCEEDED');
      expect(await shardHolding(requestId(refused)), 'a refused request adds no job').to.equal(undefined);
    } finally {
      env().sim.knobs.reset(); // lets the held ones answer, and the queued ones run unheld
    }
    for (const r of await Promise.all(pending)) expect(r.status, r.text).to.equal(200);
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive')).to.equal(true);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'the refused request is not billed').to.equal(cap);
  });

  it('cancels a running job on either shard from its id alone', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    env().sim.knobs.set('sim-chat-1', { hang: true });
    const cancelled = new Set<string>();
    try {
      for (let i = 0; i < 30 && cancelled.size < 2; i++) {
        const reply = chat(o.key, `hang ${i}`);
        expect(await waitFor(async () => (await openJobs(o.org.id)).length === 1, 5000), 'the job is queued').to.equal(true);
        const [job] = await openJobs(o.org.id);
        expect(await waitFor(() => env().sim.log.entries.length === i + 1, 5000), 'the job is upstream').to.equal(true);
        await cancelJob(env().redis, queues(), QUEUE, job.id); // as a pod that did not add the job: queue and id only
        expect(await waitFor(() => env().sim.log.entries[i].aborted, 5000), `the upstream call of a job on ${job.shard} was aborted`).to.equal(true);
        const r = await reply;
        expect(r.status, r.text).to.equal(499);
        expect(r.body.error.code).to.equal('client_closed_request');
        cancelled.add(job.shard);
      }
    } finally {
      env().sim.knobs.reset();
    }
    expect([...cancelled].sort(), 'cancelled on both shards').to.deep.equal(['chat-interactive', 'chat-interactive-1']);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'cancelled requests are not billed').to.equal(0);
  });

  it('answers from the job’s own shard when the pod missed the reply (recovery), billing each once', async function () {
    this.timeout(30_000);
    const gw = await startGateway();
    try {
      await gw.ctx.sub.sunsubscribe(...gw.ctx.replies.channels); // this pod hears no reply: it must recover each result
      const o = await buildOrg(env().redis);
      const from = new Map<string, number>();
      const replies: Reply[] = [];
      for (let i = 0; i < 30 && !(from.size === 2 && Math.min(...from.values()) >= 2); i++) {
        const r = await call('POST', '/v1/chat/completions', { base: gw.url, headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: `recover ${i}` }] } });
        expect(r.status, r.text).to.equal(200);
        expect(r.body.choices[0].message.content).to.be.a('string').and.not.equal('');
        replies.push(r);
        const shard = (await shardHolding(requestId(r)))!;
        from.set(shard, (from.get(shard) ?? 0) + 1);
      }
      expect([...from.keys()].sort(), JSON.stringify([...from])).to.deep.equal(['chat-interactive', 'chat-interactive-1']);
      await usageSettled();
      expect((await UsageEvent.findAll({ where: { orgId: o.org.id } })).map((e) => e.requestId).sort(), 'recovered results are billed once').to.deep.equal(replies.map(requestId).sort());
    } finally {
      await gw.close();
    }
  });

  it('splits an operator’s concurrency for the queue evenly over its shards’ workers (5: 3 each), and pauses every shard', async function () {
    this.timeout(30_000);
    const admin = await startAdmin();
    const { key } = await buildPlatformKey();
    const rows = schedulerRows(() => ({ url: admin.url, key }));
    const shardWorkers = () => pools().workers.filter((w) => w.name === QUEUE || w.name === `${QUEUE}-1`);
    // the operator's figure (where a governor runs, WORKER_LAG_MS, it may run fewer while the process lags)
    const ceiling = (w: Worker) => (pools().governor.governs(w) ? pools().governor.baseOf(w)! : w.concurrency);
    try {
      expect(shardWorkers().map((w) => w.name).sort()).to.deep.equal([QUEUE, `${QUEUE}-1`]);
      const env0 = config().chatInteractiveConcurrency;
      expect(shardWorkers().reduce((n, w) => n + ceiling(w), 0), 'the env default, split').to.equal(env0);
      await rows.put(QUEUE, { concurrency: 5 });
      expect(await waitFor(() => shardWorkers().map(ceiling).join() === '3,3', 5000), `concurrency ${shardWorkers().map((w) => `${w.name}=${ceiling(w)}`)}`).to.equal(true);
      await rows.put(QUEUE, { enabled: false });
      expect(await waitFor(() => shardWorkers().every((w) => w.isPaused()), 5000), 'both shards paused').to.equal(true);
      await rows.drop(QUEUE);
      expect(await waitFor(() => shardWorkers().every((w) => !w.isPaused()) && shardWorkers().reduce((n, w) => n + ceiling(w), 0) === env0, 5000), 'back to the defaults').to.equal(true);
    } finally {
      await rows.drop(QUEUE);
      await admin.close();
    }
  });

  it('has every worker process of the chat pool consume every shard', async function () {
    this.timeout(60_000);
    const { children, restore } = await childChatWorkers(2, { QUEUE_SHARDS_CHAT: '2' });
    try {
      for (const q of shardsOf(QUEUE).map((name) => queues().get(name))) {
        const ok = await waitFor(async () => (await q.getWorkers()).length >= 2, 5000);
        expect(ok, `${q.name}: workers ${JSON.stringify((await q.getWorkers()).map((w) => w.name))}`).to.equal(true);
      }
      // and the jobs of both shards run on both processes (seen while they run: a completed job is removed at once)
      const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 100 } });
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const seen = new Set<string>();
      for (let round = 0; round < 10 && seen.size < 4; round++) {
        // 8 at a time: each shard has 8 slots over the two processes (4 each), so all 8 run however they spread
        const upstreamBefore = env().sim.log.entries.length;
        const replies = Array.from({ length: 8 }, (_, i) => chat(o.key, `round ${round} ${i}`));
        // running, and each one's upstream call held (a call reaching the simulator after the release would wait for the next one)
        const allHeld = async () => env().sim.log.entries.length - upstreamBefore === 8 && (await openJobs(o.org.id, ['active'])).length === 8;
        expect(await waitFor(allHeld, 10_000), `round ${round}: 8 jobs running`).to.equal(true);
        for (const job of await openJobs(o.org.id, ['active'])) seen.add(`${job.shard} on ${job.processedBy}`);
        env().sim.knobs.release();
        for (const r of await Promise.all(replies)) expect(r.status, r.text).to.equal(200);
      }
      expect(seen.size, [...seen].join('; ')).to.equal(4);
      expect(children).to.have.length(2);
    } finally {
      env().sim.knobs.reset();
      await restore();
    }
  });

  it('serves a quiet org ahead of a flood spread over both shards', async function () {
    this.timeout(120_000);
    const WORKERS = config().chatInteractiveConcurrency; // split over the two shards' workers
    const flood = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 1000 } });
    const quiet = await buildOrg(env().redis);
    env().sim.knobs.set('sim-chat-1', { delayMs: 100 });
    const log = env().sim.log.entries;
    const waiting = async () => (await queues().jobCounts(QUEUE, 'prioritized')).prioritized;
    const floodDone = Promise.all(Array.from({ length: 800 }, () => chat(flood.key)));
    expect(await waitFor(async () => (await waiting()) > 200, 60_000), 'the flood built a backlog').to.equal(true);
    const place: number[] = [];
    const fifoPlace: number[] = [];
    for (let i = 0; i < 20; i++) {
      // 20 samples: the nearest-rank p95 is the 19th, not the maximum
      const queued = await waiting();
      const mark = log.length;
      const r = await chat(quiet.key, `quiet ${i}`);
      expect(r.status, r.text).to.equal(200);
      const at = log.findIndex((e, n) => n >= mark && (e.body as { messages: Array<{ content: string }> }).messages[0].content === `quiet ${i}`);
      expect(at, `quiet ${i} reached the upstream`).to.be.at.least(mark);
      fifoPlace.push(queued);
      place.push(at - mark);
    }
    expect((await floodDone).every((r) => r.status === 200)).to.equal(true);
    const detail = `places ${place.join(',')}; FIFO places ${fifoPlace.join(',')}`;
    // a quiet job waits for a slot of its own shard's worker while the other shard's keeps taking
    // flood jobs: a little more than one round of the workers, never the backlog FIFO would give
    expect(percentile(place, 95), detail).to.be.at.most(3 * WORKERS);
    expect(Math.min(...fifoPlace), detail).to.be.above(8 * WORKERS);
  });
});
