import { expect } from 'chai';
import type { Job } from 'bullmq';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { pools, poolsWithSettings } from '../../helpers/pools';
import { completedIn } from '../../helpers/completed-jobs';
import { leasesFreed } from '../../helpers/leases';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { ExpressAnnouncer, ExpressShare } from '../../../shared/queues/express';
import { createRedis, type RedisClient } from '../../../shared/redis/connection';
import { closeContext, createContext } from '../../../api/context';
import { keys } from '../../../shared/redis/keys';
import { registry } from '../../../shared/metrics';
import { withSettings } from '../../helpers/settings';

const QUEUE = 'chat-interactive' as const;
const EXPRESS = 'chat-interactive-express';
const chat = (key: string, model: string, content = 'express test') =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content }] } });
const requestId = (r: Reply) => r.headers.get('x-service-request-id')!;
const ctx = () => env().gw.ctx;

/** The org's jobs not finished yet, over the shards and the express queue, each with the BullMQ queue it is on. */
async function openJobs(orgId: string): Promise<Array<{ id: string; queue: string }>> {
  const per = await Promise.all(
    ctx()
      .queues.shards(QUEUE)
      .map(async (q) => ((await q.getJobs(['active', 'prioritized', 'waiting'])) as Array<Job | undefined>).filter((j) => j?.data.orgId === orgId).map((j) => ({ id: j!.id!, queue: q.name }))),
  );
  return per.flat();
}

/** The pod's share once it has read the workers' announcements (the pools were just restarted). */
async function shareSettles(share: number): Promise<boolean> {
  return waitFor(async () => {
    await ctx().express.refresh();
    return ctx().express.shareOf(QUEUE).share === share;
  }, 5000);
}

/**
 * One org (the flood) keeps every interactive slot of the worker busy with held requests and more
 * waiting; a second org sends one request to another model, which the simulator answers at once.
 */
async function flood(): Promise<{ flood: Awaited<ReturnType<typeof buildOrg>>; floodReplies: Array<Promise<Reply>> }> {
  const f = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 20 } });
  env().sim.knobs.set('sim-chat-1', { hold: true });
  const floodReplies: Array<Promise<Reply>> = [];
  for (let i = 0; i < 6; i++) {
    floodReplies.push(chat(f.key, 'sim-chat', `flood ${i}`));
    // one at a time, so that each finds the ones before it in flight (only the first two go express)
    expect(await waitFor(async () => (await openJobs(f.org.id)).length === i + 1, 5000), `flood job ${i} queued`).to.equal(true);
  }
  // the two slots and two express slots (the flood's first two jobs: EXPRESS_MAX_IN_FLIGHT 2) hold flood jobs at the upstream; two wait
  expect(await waitFor(() => env().sim.log.entries.length === 4, 5000), 'four flood requests upstream').to.equal(true);
  return { flood: f, floodReplies };
}

describe('express slots (shared/queues/express.ts): a quiet org never waits for a flooding org’s slot', function () {
  this.timeout(30_000);

  describe('with two interactive slots and three express slots', () => {
    poolsWithSettings({ CHAT_INTERACTIVE_CONCURRENCY: '2', CHAT_EXPRESS_CONCURRENCY: '3' });
    beforeEach(resetSim);
    afterEach(() => env().sim.knobs.release());

    it('answers the quiet org from an express slot while the flood holds every slot, and sends no more than the flood’s first two jobs there', async () => {
      expect(await shareSettles(3), 'the pod learned its share of the announced slots').to.equal(true);
      const { flood: f, floodReplies } = await flood();
      const quiet = await buildOrg(env().redis);
      const started = Date.now();
      const r = await chat(quiet.key, 'sim-chat-mini');
      expect(r.status, r.text).to.equal(200);
      expect(Date.now() - started, 'answered while the flood is held').to.be.below(5000);
      expect(await completedIn(env().redis, ctx().queues.shards(QUEUE), requestId(r)), 'the quiet job ran on the express queue').to.equal(EXPRESS);
      const floodJobs = await openJobs(f.org.id);
      expect(floodJobs.filter((j) => j.queue === EXPRESS), `flood jobs per queue ${JSON.stringify(floodJobs)}`).to.have.length(2);
      expect(floodJobs.filter((j) => j.queue === QUEUE)).to.have.length(4);

      env().sim.knobs.release();
      env().sim.knobs.reset();
      const replies = await Promise.all(floodReplies);
      expect(replies.map((x) => x.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
      await usageSettled();
      const billed = await UsageEvent.findAll({ where: { orgId: [f.org.id, quiet.org.id] } });
      expect(billed.map((e) => e.requestId).sort(), 'each request billed once').to.deep.equal([...replies, r].map(requestId).sort());
      expect(ctx().express.shareOf(QUEUE).inFlight, 'the pod’s share is free again').to.equal(0);
      expect(await leasesFreed(ctx().leases, f.org.id, 'chat', 'interactive')).to.equal(true);
    });

    it('cancels an express job whose client disconnects, bills nothing and frees the share', async () => {
      expect(await shareSettles(3)).to.equal(true);
      const o = await buildOrg(env().redis);
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const ac = new AbortController();
      const pending = fetch(`${env().gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'cancel me' }] }),
        signal: ac.signal,
      }).catch((e: Error) => e);
      expect(await waitFor(() => env().sim.log.entries.length === 1, 5000), 'upstream').to.equal(true);
      expect((await openJobs(o.org.id)).map((j) => j.queue)).to.deep.equal([EXPRESS]);
      ac.abort();
      expect(await pending).to.be.instanceOf(Error);
      expect(await waitFor(() => env().sim.log.entries[0].aborted === true, 5000), 'the upstream call was aborted').to.equal(true);
      expect(await leasesFreed(ctx().leases, o.org.id, 'chat', 'interactive')).to.equal(true);
      expect(ctx().express.shareOf(QUEUE).inFlight).to.equal(0);
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'a cancelled request is not billed').to.equal(0);
    });
  });

  describe('with the queue in two shards (QUEUE_SHARDS_CHAT=2): the express queue in two shards too', () => {
    poolsWithSettings({ QUEUE_SHARDS_CHAT: '2', CHAT_EXPRESS_CONCURRENCY: '4' });
    beforeEach(resetSim);

    it('spreads a lone org’s jobs over both express shards by their ids, each shard with its half of the slots', async () => {
      expect(await shareSettles(4), 'the process announced its 2 + 2 express slots').to.equal(true);
      const express = pools().workers.filter((w) => w.name.startsWith(EXPRESS)).map((w) => `${w.name}:${w.concurrency}`).sort();
      expect(express).to.deep.equal([`${EXPRESS}-1:2`, `${EXPRESS}:2`]);
      const o = await buildOrg(env().redis);
      const ran = new Map<string, number>();
      for (let i = 0; i < 30 && ran.size < 2; i++) {
        const r = await chat(o.key, 'sim-chat-mini', `lone ${i}`);
        expect(r.status, r.text).to.equal(200);
        const q = await completedIn(env().redis, ctx().queues.shards(QUEUE), requestId(r));
        ran.set(q!, (ran.get(q!) ?? 0) + 1);
      }
      expect([...ran.keys()].sort(), JSON.stringify([...ran])).to.deep.equal([EXPRESS, `${EXPRESS}-1`]);
    });
  });

  describe('without express slots (CHAT_EXPRESS_CONCURRENCY=0)', () => {
    poolsWithSettings({ CHAT_INTERACTIVE_CONCURRENCY: '2', CHAT_EXPRESS_CONCURRENCY: '0' });
    beforeEach(resetSim);
    afterEach(() => env().sim.knobs.release());

    it('sends every job to the shards, where the quiet org waits for a flood job to finish', async () => {
      expect(await shareSettles(0), 'no worker announces express slots').to.equal(true);
      const f = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 20 } });
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const floodReplies = [0, 1, 2].map((i) => chat(f.key, 'sim-chat', `flood ${i}`));
      expect(await waitFor(() => env().sim.log.entries.length === 2, 5000), 'both slots held').to.equal(true);
      const quiet = await buildOrg(env().redis);
      let answered = false;
      const reply = chat(quiet.key, 'sim-chat-mini').then((r) => ((answered = true), r));
      await new Promise((r) => setTimeout(r, 1000));
      expect(answered, 'the quiet request waits for a slot').to.equal(false);
      expect((await openJobs(quiet.org.id)).map((j) => j.queue)).to.deep.equal([QUEUE]);
      env().sim.knobs.release();
      env().sim.knobs.reset();
      expect((await reply).status).to.equal(200);
      expect((await Promise.all(floodReplies)).map((x) => x.status)).to.deep.equal([200, 200, 200]);
    });
  });
});

describe('express slots: who shares them', function () {
  this.timeout(20_000);

  it('a context made without express slots (the batch runner) is not counted among the pods; a web pod’s is', async () => {
    const podsKey = keys.express(EXPRESS, 'pods');
    const pods = async () => (await env().redis.zrangebyscore(podsKey, Date.now(), '+inf')).sort();
    const before = await pods();
    expect(before, 'the test gateway is among the pods').to.include(env().gw.ctx.podId);
    const batch = await createContext(`batch-like-${Date.now()}`, { expressSlots: false });
    try {
      expect(await pods(), 'the batch runner is not').to.deep.equal(before);
      expect(batch.express.take(QUEUE, 0, 'req_x'), 'and sends nothing there').to.equal(undefined);
    } finally {
      await closeContext(batch);
    }
    const web = await createContext(`web-like-${Date.now()}`);
    try {
      expect(await pods(), 'a second web pod is').to.deep.equal([...before, web.podId].sort());
      expect(web.express.shareOf(QUEUE).share, 'and takes its share').to.be.above(0);
    } finally {
      await closeContext(web);
    }
    expect(await pods(), 'and leaves when it closes').to.deep.equal(before);
  });

  it('a web pod sends an org’s job express while the org has at most EXPRESS_MAX_IN_FLIGHT jobs in flight, this one included (default 2: one other)', async () => {
    const taken = async (settings: Record<string, string>) => {
      let out: Array<string | undefined> = [];
      await withSettings(settings, async () => {
        const web = await createContext(`web-max-${Date.now()}`);
        try {
          expect(web.express.shareOf(QUEUE).share, 'the pod has a share').to.be.above(0);
          out = [web.express.take(QUEUE, 0, 'req_a'), web.express.take(QUEUE, 1, 'req_b'), web.express.take(QUEUE, 2, 'req_c')];
        } finally {
          await closeContext(web);
        }
      });
      return out.map((q) => (q ? 'express' : 'shards'));
    };
    expect(await taken({}), 'default').to.deep.equal(['express', 'express', 'shards']);
    expect(await taken({ EXPRESS_MAX_IN_FLIGHT: '1' })).to.deep.equal(['express', 'shards', 'shards']);
  });
});

describe('express slots: each pod’s share of the announced slots', function () {
  this.timeout(20_000);
  const queues = { 'share-test': 'share-test-express' } as const;
  let redis: RedisClient;
  const started: Array<{ stop(): Promise<void> }> = [];
  /** A pod sending only an organization's lone request express (EXPRESS_MAX_IN_FLIGHT=1), unless told otherwise. */
  const pod = async (id: string, maxInFlight = 1) => {
    const p = new ExpressShare(redis, id, maxInFlight, 60_000, queues);
    started.push(p);
    await p.start();
    return p;
  };
  const worker = async (id: string, slots: number) => {
    const w = new ExpressAnnouncer(redis, id, [{ express: 'share-test-express', slots }], 60_000);
    started.push(w);
    await w.start();
    return w;
  };

  beforeEach(() => {
    redis = createRedis('command');
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.stop()));
    redis.disconnect();
  });

  it('shares the workers’ slots out evenly among the live pods, rounded down, and follows workers and pods that leave', async () => {
    const a = await pod(`pod-a-${Date.now()}`);
    expect(a.shareOf('share-test' as never).share, 'no worker announced: no express').to.equal(0);
    expect(a.take('share-test' as never, 0, 'req_x')).to.equal(undefined);
    const w1 = await worker(`w1-${Date.now()}`, 8);
    await worker(`w2-${Date.now()}`, 5);
    const b = await pod(`pod-b-${Date.now()}`);
    await a.refresh();
    expect([a.shareOf('share-test' as never).share, b.shareOf('share-test' as never).share], '13 slots over 2 pods').to.deep.equal([6, 6]);
    await w1.stop();
    await Promise.all([a.refresh(), b.refresh()]);
    expect([a.shareOf('share-test' as never).share, b.shareOf('share-test' as never).share], '5 slots over 2 pods').to.deep.equal([2, 2]);
    await b.stop();
    await a.refresh();
    expect(a.shareOf('share-test' as never).share, 'the pod left: 5 slots for one').to.equal(5);
  });

  it('takes an express slot only for an org with nothing else in flight, within the share, until done', async () => {
    const a = await pod(`pod-c-${Date.now()}`);
    await worker(`w3-${Date.now()}`, 2);
    await a.refresh();
    const q = 'share-test' as never;
    expect(a.take(q, 1, 'req_x'), 'an org with a job in flight').to.equal(undefined);
    expect(a.take('chat-background', 0, 'req_x'), 'a queue without express').to.equal(undefined);
    const counted = async (to: string) => (await registry.getSingleMetric('gateway_express_jobs_total')!.get()).values.find((v) => v.labels.queue === 'share-test' && v.labels.to === to)?.value ?? 0;
    const [express, shards] = [await counted('express'), await counted('shards')];
    expect([a.take(q, 0, 'req_x'), a.take(q, 0, 'req_x'), a.take(q, 0, 'req_x')]).to.deep.equal(['share-test-express', 'share-test-express', undefined]);
    expect([(await counted('express')) - express, (await counted('shards')) - shards], 'gateway_express_jobs_total: 2 to express, 1 to the shards (share in use)').to.deep.equal([2, 1]);
    a.done(q);
    expect(a.take(q, 0, 'req_x'), 'a slot given back').to.equal('share-test-express');
    expect(a.shareOf(q)).to.deep.equal({ share: 2, inFlight: 2 });
  });

  it('with EXPRESS_MAX_IN_FLIGHT=3, takes an express slot for an org with up to two other jobs in flight, not three', async () => {
    const a = await pod(`pod-d-${Date.now()}`, 3);
    await worker(`w4-${Date.now()}`, 8);
    await a.refresh();
    const q = 'share-test' as never;
    expect([0, 1, 2, 3, 10].map((held) => a.take(q, held, 'req_x')), 'by the jobs in flight before this one').to.deep.equal(['share-test-express', 'share-test-express', 'share-test-express', undefined, undefined]);
    expect(a.shareOf(q), 'three taken, within the share').to.deep.equal({ share: 8, inFlight: 3 });
  });
});
