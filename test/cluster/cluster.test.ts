import { expect } from 'chai';
import { Job } from 'bullmq';
import calculateSlot from 'cluster-key-slot';
import type { Cluster } from 'ioredis';
import { buildOrg } from '../helpers/factories';
import { call, keyHeader, type Reply } from '../helpers/http';
import { percentile, waitFor } from '../helpers/wait';
import { leasesFreed } from '../helpers/leases';
import { UsageEvent } from '../../shared/db/models';
import { LeaseManager } from '../../shared/lanes/leases';
import { Queues } from '../../shared/queues/queues';
import { cancelJob } from '../../shared/queues/cancel';
import { ALL_QUEUES } from '../../shared/queues/names';
import { createRedis } from '../../shared/redis/connection';
import { keys } from '../../shared/redis/keys';
import { revokeApiKey } from '../../shared/tenancy/ops';
import { clusterEnv, ownerOf, usageSettled } from './env';
import { startChatWorker } from './processes';

const body = (extra: Record<string, unknown> = {}) => ({ model: 'sim-chat', messages: [{ role: 'user', content: 'cluster test' }], ...extra });
const chat = (base: string, key: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/v1/chat/completions', { base, headers: keyHeader(key), json: body(extra) });
const [A, B] = [() => clusterEnv().webs[0].url!, () => clusterEnv().webs[1].url!];
const requestId = (r: Reply) => r.headers.get('x-service-request-id')!;

describe('on a Redis Cluster: two web pods and two chat worker processes', () => {
  let leases: LeaseManager;
  let queues: Queues;
  before(() => {
    leases = new LeaseManager(clusterEnv().redis, 5000);
    queues = new Queues(createRedis('producer')); // as a web pod holds them: this process plays the other pod
  });
  after(async () => {
    leases.stop();
    await queues.close();
  });
  /** Running chat-interactive jobs, over every shard. */
  const activeChatJobs = async () => (await Promise.all(queues.shards('chat-interactive').map((q) => q.getActive()))).flat();
  beforeEach(() => {
    clusterEnv().sim.knobs.reset();
    clusterEnv().sim.log.entries.length = 0;
  });

  it('spreads the queues and the usage outbox streams over the masters', async () => {
    const redis = clusterEnv().redis as Cluster;
    const queueOwners = new Set(await Promise.all(ALL_QUEUES.map((q) => ownerOf(redis, calculateSlot(`${keys.bullPrefix(q)}:${q}:wait`)))));
    const outboxOwners = new Set(await Promise.all(keys.usageStreams().map((s) => ownerOf(redis, calculateSlot(s.stream)))));
    expect(queueOwners.size, 'masters holding a queue').to.be.at.least(2);
    expect(outboxOwners.size, 'masters holding an outbox stream').to.be.at.least(2);
  });

  it('answers chat JSON and streamed through either pod, and bills each request exactly once', async () => {
    const o = await buildOrg(clusterEnv().redis);
    const replies: Reply[] = [];
    for (let i = 0; i < 12; i++) replies.push(await chat(i % 2 ? B() : A(), o.key));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.choices[0].message.content).to.be.a('string').and.not.equal('');
    }
    for (const base of [A(), B()]) {
      const s = await chat(base, o.key, { stream: true });
      expect(s.status, s.text).to.equal(200);
      expect(s.text).to.match(/^data: /m).and.to.include('data: [DONE]');
      replies.push(s);
    }
    await usageSettled();
    const rows = await UsageEvent.findAll({ where: { orgId: o.org.id } });
    expect(rows.map((r) => r.requestId).sort()).to.deep.equal(replies.map(requestId).sort());
    // the events went through more than one outbox stream (each pod hands its reply channels out in turn)
    const used = await Promise.all(
      keys.usageStreams().map(async (s) => {
        const info = (await clusterEnv().redis.xinfo('STREAM', s.stream)) as unknown[];
        return Number(info[info.indexOf('entries-added') + 1]);
      }),
    );
    expect(used.filter((n) => n > 0).length, `entries added per stream: ${used.join(',')}`).to.be.at.least(2);
  });

  it('holds an org’s lane cap across both pods', async () => {
    const o = await buildOrg(clusterEnv().redis, { laneOverrides: { 'chat:interactive': 2 } });
    // The two requests hold their lanes upstream until the test releases them, however slow the machine.
    clusterEnv().sim.knobs.set('sim-chat-1', { hold: true });
    const first = [chat(A(), o.key), chat(B(), o.key)];
    expect(await waitFor(() => clusterEnv().sim.log.entries.length === 2, 5000), 'two requests upstream').to.equal(true);
    for (const base of [A(), B()]) {
      const r = await chat(base, o.key);
      expect(r.status, r.text).to.equal(429);
      expect(r.body.error.code).to.equal('CONCURRENT_REQUEST_LIMIT_EXCEEDED');
    }
    clusterEnv().sim.knobs.release();
    for (const r of await Promise.all(first)) expect(r.status).to.equal(200);
    expect(await leasesFreed(leases, o.org.id, 'chat', 'interactive', 3000), 'leases released').to.equal(true);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'refused requests are not billed').to.equal(2);
  });

  it('keeps a quiet org fast while another org floods both pods', async function () {
    this.timeout(90_000);
    const flood = await buildOrg(clusterEnv().redis, { laneOverrides: { 'chat:interactive': 1000 } });
    const quiet = await buildOrg(clusterEnv().redis);
    clusterEnv().sim.knobs.set('sim-chat-1', { delayMs: 150 });
    const timed = async (i: number) => {
      const t = Date.now();
      const r = await chat(i % 2 ? B() : A(), quiet.key);
      expect(r.status).to.equal(200);
      return Date.now() - t;
    };
    const unloaded: number[] = [];
    for (let i = 0; i < 9; i++) unloaded.push(await timed(i));
    // 2 workers × 8 jobs at a time, 150 ms a job. The flood keeps 240 requests outstanding (each one
    // answered is replaced), so ~220 jobs stay queued, ~2 s of FIFO wait, for as long as the quiet org
    // is measured, however fast the machine drains them. Measured once the backlog has built up.
    // over every shard of the queue (QUEUE_SHARDS_CHAT, 3 on a cluster by default)
    const backlog = async () => {
      const c = await queues.jobCounts('chat-interactive', 'prioritized', 'waiting');
      return c.prioritized + c.waiting;
    };
    let flooding = true;
    const floodStatuses = new Set<number>();
    const pump = async (i: number) => {
      while (flooding) floodStatuses.add((await chat(i % 2 ? B() : A(), flood.key)).status);
    };
    const pumps = Array.from({ length: 240 }, (_, i) => pump(i));
    const loaded: number[] = [];
    const backlogs: number[] = [];
    try {
      expect(await waitFor(async () => (await backlog()) >= 150, 30_000), 'the flood built a backlog').to.equal(true);
      for (let i = 0; i < 25; i++) {
        loaded.push(await timed(i));
        backlogs.push(await backlog());
      }
    } finally {
      flooding = false;
      await Promise.all(pumps);
    }
    expect([...floodStatuses]).to.deep.equal([200]);
    const detail = `unloaded ${unloaded.join(',')} ms, loaded ${loaded.join(',')} (p95 ${percentile(loaded, 95)}), backlog after each ${backlogs.join(',')}`;
    expect(Math.min(...backlogs), `a backlog remained throughout: ${detail}`).to.be.above(50);
    expect(percentile(loaded, 50), detail).to.be.below(3 * percentile(unloaded, 50) + 250);
  });

  it('cancels a streaming job on whichever worker runs it when its client leaves pod B', async () => {
    const o = await buildOrg(clusterEnv().redis);
    clusterEnv().sim.knobs.set('sim-chat-1', { tokenDelayMs: 200, outputWords: 60 });
    const ac = new AbortController();
    const res = await fetch(`${B()}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(body({ stream: true })),
      signal: ac.signal,
    });
    await res.body!.getReader().read(); // the first event arrived
    ac.abort();
    const entry = clusterEnv().sim.log.entries[0];
    expect(await waitFor(() => entry.aborted, 5000), 'the upstream call was aborted').to.equal(true);
    expect(await leasesFreed(leases, o.org.id, 'chat', 'interactive', 3000)).to.equal(true);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: res.headers.get('x-service-request-id')! } }), 'a cancelled request is not billed').to.equal(0);
  });

  it('delivers a cancel sent from a pod that did not enqueue the job to the worker running it', async () => {
    const e = clusterEnv();
    const o = await buildOrg(e.redis);
    e.sim.knobs.set('sim-chat-1', { hang: true });
    const reply = chat(B(), o.key);
    expect(await waitFor(() => e.sim.log.entries.length === 1, 10_000), 'the job is upstream').to.equal(true);
    const [active] = await activeChatJobs();
    await cancelJob(e.redis, queues, 'chat-interactive', active.id!); // this process acts as the other pod
    expect(await waitFor(() => e.sim.log.entries[0].aborted, 5000), 'the upstream call was aborted').to.equal(true);
    const r = await reply;
    expect(r.status, r.text).to.equal(499);
    expect(r.body.error.code).to.equal('client_closed_request');
    expect(await leasesFreed(leases, o.org.id, 'chat', 'interactive', 3000)).to.equal(true);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: requestId(r) } }), 'a cancelled request is not billed').to.equal(0);
  });

  it('follows the cache epoch on both pods: a revoked key fails on the very next request to either', async () => {
    const o = await buildOrg(clusterEnv().redis);
    for (const base of [A(), B()]) expect((await chat(base, o.key)).status).to.equal(200); // both pods cached the key
    await revokeApiKey(clusterEnv().redis, o.keyId);
    for (const base of [A(), B()]) expect((await chat(base, o.key)).status).to.equal(401);
  });

  it('answers worker_lost and frees the lease when the worker running a job is killed; the other worker goes on', async function () {
    this.timeout(40_000);
    const e = clusterEnv();
    const o = await buildOrg(e.redis);
    e.sim.knobs.set('sim-chat-1', { hang: true });
    const reply = chat(A(), o.key);
    expect(await waitFor(() => e.sim.log.entries.length === 1, 10_000), 'the job is upstream').to.equal(true);
    const [active] = await activeChatJobs();
    const job = (await Job.fromId(queues.get(active.queueName) as never, active.id!))!;
    const holder = e.workers.find((w) => w.name === job.processedBy);
    expect(holder, `processedBy ${job.processedBy}`).to.not.equal(undefined);
    await holder!.stop('SIGKILL');
    e.workers.splice(e.workers.indexOf(holder!), 1, await startChatWorker(`${holder!.name}-again`));
    const r = await reply;
    expect(r.status).to.equal(502);
    expect(r.body.error.code).to.equal('worker_lost');
    expect(await leasesFreed(leases, o.org.id, 'chat', 'interactive', 3000), 'lease freed').to.equal(true);
    e.sim.knobs.reset();
    expect((await chat(B(), o.key)).status, 'the pods still answer').to.equal(200);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: requestId(r) } })).to.equal(0);
  });
});
