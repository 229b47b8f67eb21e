import { expect } from 'chai';
import calculateSlot from 'cluster-key-slot';
import type { Cluster } from 'ioredis';
import { buildOrg } from '../helpers/factories';
import { call, keyHeader, type Reply } from '../helpers/http';
import { percentile, waitFor } from '../helpers/wait';
import { UsageEvent } from '../../shared/db/models';
import { config } from '../../shared/config/env';
import { Queues } from '../../shared/queues/queues';
import { shardsOf } from '../../shared/queues/shards';
import { createRedis } from '../../shared/redis/connection';
import { keys } from '../../shared/redis/keys';
import { readNodes, spreadRows } from '../../scripts/bench/cluster-spread';
import { clusterEnv, ownerOf, usageSettled } from './env';
import { completedIn } from '../helpers/completed-jobs';

const QUEUE = 'chat-interactive' as const;
const chat = (base: string, key: string, content = 'shard test') =>
  call('POST', '/v1/chat/completions', { base, headers: keyHeader(key), json: { model: 'sim-chat', messages: [{ role: 'user', content }] } });
const pod = (i: number) => clusterEnv().webs[i % 2].url!;
const requestId = (r: Reply) => r.headers.get('x-service-request-id')!;

describe('on a Redis Cluster: the chat queue in shards (QUEUE_SHARDS_CHAT, 3 by default on a cluster)', () => {
  let queues: Queues;
  before(() => {
    queues = new Queues(createRedis('producer'));
  });
  after(() => queues.close());
  beforeEach(() => {
    clusterEnv().sim.knobs.reset();
    clusterEnv().sim.log.entries.length = 0;
  });

  it('puts one shard on each master; one org’s jobs land on every shard, each shard consumed by both worker processes', async function () {
    this.timeout(60_000);
    const redis = clusterEnv().redis as Cluster;
    // the shards, not the express queue (shared/queues/express.ts), where only the org's first two jobs can go
    const shards = shardsOf(QUEUE).map((name) => queues.get(name));
    expect(config().queueShardsChat, 'the cluster default').to.equal(3);
    expect(shards.map((q) => q.name)).to.deep.equal(['chat-interactive', 'chat-interactive-1', 'chat-interactive-2']);
    const owners = await Promise.all(shards.map((q) => ownerOf(redis, calculateSlot(`${keys.bullPrefix(q.name)}:${q.name}:wait`))));
    expect(new Set(owners).size, `masters of the shards: ${owners.join(', ')}`).to.equal(3);
    for (const q of shards) {
      // a worker's connection is named `<queue's client name>:w:<POD_ID>` (BullMQ's rawname)
      const names = async () => (await q.getWorkers()).map((w) => String((w as { rawname?: string }).rawname)).join(' ');
      expect(await waitFor(async () => /worker-1/.test(await names()) && /worker-2/.test(await names()), 5000), `${q.name} workers: ${await names()}`).to.equal(true);
    }
    const o = await buildOrg(clusterEnv().redis, { laneOverrides: { 'chat:interactive': 100 } });
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(pod(i), o.key)));
    // which shard completed each job (a completed job is removed at once; its `completed` event stays)
    const ran = new Map<string, number>(shards.map((q) => [q.name, 0]));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      const shard = await completedIn(redis, queues.shards(QUEUE), requestId(r));
      expect(shard, `shard of ${requestId(r)}`).to.be.a('string');
      ran.set(shard!, (ran.get(shard!) ?? 0) + 1);
    }
    const detail = JSON.stringify([...ran]);
    for (const q of shards) expect(ran.get(q.name), `each shard ran jobs: ${detail}`).to.be.at.least(1);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'each request billed once').to.equal(replies.length);
  });

  it('keeps a quiet org ahead of another org’s flood spread over every shard', async function () {
    this.timeout(120_000);
    const e = clusterEnv();
    const flood = await buildOrg(e.redis, { laneOverrides: { 'chat:interactive': 1000 } });
    const quiet = await buildOrg(e.redis);
    e.sim.knobs.set('sim-chat-1', { delayMs: 100 });
    // the pool's jobs at a time, over all shards (each process's concurrency split evenly, rounded up)
    const slots = e.workers.length * 3 * Math.ceil(config().chatInteractiveConcurrency / 3);
    const perShard = async () => Promise.all(shardsOf(QUEUE).map(async (name) => (await queues.get(name).getJobCounts('prioritized')).prioritized));
    const backlog = async () => (await perShard()).reduce((a, b) => a + b, 0);
    let flooding = true;
    const pump = async (i: number) => {
      while (flooding) {
        const r = await chat(pod(i), flood.key, 'flood');
        expect(r.status, r.text).to.equal(200);
      }
    };
    const pumps = Array.from({ length: 240 }, (_, i) => pump(i));
    const place: number[] = [];
    const fifoPlace: number[] = [];
    const spread: string[] = [];
    try {
      expect(await waitFor(async () => (await backlog()) >= 150, 30_000), 'the flood built a backlog').to.equal(true);
      for (let i = 0; i < 20; i++) {
        // 20 samples: the nearest-rank p95 is the 19th, not the maximum
        const counts = await perShard();
        spread.push(counts.join('/'));
        fifoPlace.push(counts.reduce((a, b) => a + b, 0));
        const mark = e.sim.log.entries.length;
        const r = await chat(pod(i), quiet.key, `quiet ${i}`);
        expect(r.status, r.text).to.equal(200);
        const at = e.sim.log.entries.findIndex((x, n) => n >= mark && (x.body as { messages: Array<{ content: string }> }).messages[0].content === `quiet ${i}`);
        expect(at, `quiet ${i} reached the upstream`).to.be.at.least(mark);
        place.push(at - mark);
      }
    } finally {
      flooding = false;
      await Promise.all(pumps);
    }
    const detail = `places ${place.join(',')}; FIFO places ${fifoPlace.join(',')}; backlog per shard ${spread.join(' ')}`;
    expect(spread.every((s) => s.split('/').every((n) => Number(n) > 0)), `the flood waited on every shard: ${detail}`).to.equal(true);
    // FIFO would have put every quiet request behind the whole backlog; priority puts it behind
    // the jobs the workers took while it waited for a slot of its own shard (a few rounds at most)
    expect(Math.min(...fifoPlace), detail).to.be.above(4 * slots);
    expect(percentile(place, 95), detail).to.be.at.most(3 * slots);
  });

  it('puts no master above 50 % of the commands under one org’s chat load', async function () {
    this.timeout(90_000);
    const redis = clusterEnv().redis as Cluster;
    const o = await buildOrg(redis, { laneOverrides: { 'chat:interactive': 1000 } });
    const before = await readNodes(redis);
    let sent = 0;
    const client = async (i: number) => {
      while (sent < 600) {
        sent++;
        expect((await chat(pod(i), o.key)).status).to.equal(200);
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => client(i)));
    const { rows, maxShare } = spreadRows(before, await readNodes(redis));
    const detail = rows.map((r) => `${r[0]} ${r[1]} commands (${r[2]})`).join('; ');
    expect(maxShare, detail).to.be.at.most(0.5);
    // and the load was spread, not merely small: every master served a real part of it
    expect(Math.min(...rows.map((r) => Number(r[1]))), detail).to.be.above(0.15 * rows.reduce((s, r) => s + Number(r[1]), 0));
  });
});
