import crypto from 'crypto';
import { expect } from 'chai';
import { Pool } from 'pg';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { pools } from '../../helpers/pools';
import { chatUsage, usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { registry } from '../../../shared/metrics';
import { insertUsage, type UsageRecord } from '../../../shared/metering/usage';
import { appendUsage, OUTBOX_GROUP, outboxStats } from '../../../shared/metering/usage-outbox';
import { UsageDrainer, type UsageDrainerOptions } from '../../../shared/metering/usage-drainer';

const chat = (key: string) => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'outbox' }] } });

/** Outbox entries as the worker wrote them: [entry id, record]. */
async function outboxEntries(stream = keys.usageOutbox()): Promise<Array<[string, UsageRecord]>> {
  const rows = await env().redis.xrange(stream, '-', '+');
  return rows.map(([id, f]) => [id, JSON.parse(f[f.indexOf('u') + 1])]);
}

const rowsFor = (requestIds: string[]) => UsageEvent.count({ where: { requestId: requestIds } });

describe('usage outbox: the worker side', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);

  it('stores the usage event in the outbox in the same script as the result publish: no answer without it', async () => {
    const redis = env().redis;
    const outbox = keys.usageOutbox();
    const parked = `${outbox}:parked-by-test`;
    await usageSettled();
    await pools().drainer.stop(); // nothing moves entries to Postgres while this test looks at them
    let parkedNow = false;
    try {
      const ok = await chat(o.key);
      expect(ok.status, ok.text).to.equal(200);
      const rid = ok.headers.get('x-service-request-id')!;
      // the client has its answer: its usage event is waiting in Redis, not yet in Postgres
      const waiting = (await outboxEntries()).filter(([, u]) => u.requestId === rid);
      expect(waiting).to.have.length(1);
      expect(waiting[0][1]).to.deep.include({ orgId: o.org.id, projectId: null, apiKeyId: o.keyId, model: 'sim-chat', modality: 'chat', lane: 'interactive', passthrough: false });
      expect(waiting[0][1].inputTokens).to.equal(ok.body.usage.prompt_tokens);
      expect(waiting[0][1].outputTokens).to.equal(ok.body.usage.completion_tokens);
      expect(await rowsFor([rid])).to.equal(0);
      const gauge = await registry.getSingleMetric('gateway_usage_outbox_entries')!.get();
      expect(gauge.values[0].value).to.equal(1);

      // an outbox that cannot take the event (here: a key of the wrong type): the result is not published
      await redis.rename(outbox, parked);
      parkedNow = true;
      await redis.set(outbox, 'not a stream');
      const refused = await chat(o.key);
      expect(env().sim.log.entries, 'the upstream answered').to.have.length(2);
      expect(refused.status).to.equal(502);
      expect(refused.body.error.code).to.equal('upstream_error');
      await redis.del(outbox);
      await redis.rename(parked, outbox);
      parkedNow = false;

      await pools().drainer.start();
      await usageSettled();
      expect(await rowsFor([rid])).to.equal(1);
      expect(await rowsFor([refused.headers.get('x-service-request-id')!])).to.equal(0);
    } finally {
      if (parkedNow) {
        await redis.del(outbox);
        await redis.rename(parked, outbox);
      }
      await pools().drainer.start();
    }
  });
});

describe('usage outbox: the drainer', () => {
  let stream: string;
  let dead: string;
  let orgId: string;
  const running: UsageDrainer[] = [];

  const record = (over: Partial<UsageRecord> = {}): UsageRecord => chatUsage(orgId, `req_outbox_${crypto.randomBytes(8).toString('hex')}`, over);
  const drainer = async (opts: UsageDrainerOptions = {}) => {
    const d = new UsageDrainer({ stream, deadLetters: dead, consumer: `test-${crypto.randomBytes(3).toString('hex')}`, ...opts });
    running.push(d);
    await d.start();
    return d;
  };
  const stats = () => outboxStats(env().redis, stream, dead);
  const drained = async () => expect(await waitFor(async () => {
    const s = await stats();
    return s.entries === 0 && s.pending === 0;
  }, 10_000)).to.equal(true);

  beforeEach(async () => {
    // a stream of each test's own, so the drainer of the running workers never reads these entries
    const tag = crypto.randomBytes(4).toString('hex');
    stream = `${keys.usageOutbox()}:test-${tag}`;
    dead = `${keys.usageDeadLetters()}:test-${tag}`;
    orgId = crypto.randomUUID();
    await env().redis.xgroup('CREATE', stream, OUTBOX_GROUP, '0', 'MKSTREAM');
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((d) => d.stop()));
    await env().redis.del(stream, dead);
  });

  it('claims what a drainer read and never acknowledged, and inserts each event exactly once', async () => {
    const recs = [record(), record(), record({ modality: 'rerank', inputTokens: 0, outputTokens: 0, units: { search_units: 2 } })];
    for (const r of recs) await appendUsage(env().redis, r, stream);
    // a drainer reads the batch, inserts part of it, and dies before acknowledging anything
    const read = (await env().redis.xreadgroup('GROUP', OUTBOX_GROUP, 'dead-drainer', 'COUNT', 10, 'STREAMS', stream, '>')) as Array<[string, unknown[]]>;
    expect(read[0][1]).to.have.length(3);
    await insertUsage(recs[0]);
    expect((await stats()).pending).to.equal(3);

    // entries delivered to 'dead-drainer' are never read as new: only claiming them moves them
    await drainer({ claimIdleMs: 300 });
    await drained();
    expect(await rowsFor(recs.map((r) => r.requestId))).to.equal(3);
    const rerank = await UsageEvent.findOne({ where: { requestId: recs[2].requestId } });
    expect(rerank).to.deep.include({ orgId, modality: 'rerank', inputTokens: 0 });
    expect(rerank!.units).to.deep.equal({ search_units: 2 });
    expect(await env().redis.xpending(stream, OUTBOX_GROUP, '-', '+', 10, 'dead-drainer')).to.deep.equal([]);
    expect((await stats()).deadLetters).to.equal(0);
  });

  it('removes consumers of stopped processes that hold nothing, never one that holds entries', async () => {
    const consumers = async () =>
      ((await env().redis.xinfo('CONSUMERS', stream, OUTBOX_GROUP)) as unknown[][]).map((row) => String(row[row.indexOf('name') + 1]));
    await env().redis.xreadgroup('GROUP', OUTBOX_GROUP, 'ghost', 'COUNT', 1, 'STREAMS', stream, '>'); // read nothing, then "died"
    await appendUsage(env().redis, record(), stream);
    await env().redis.xreadgroup('GROUP', OUTBOX_GROUP, 'holder', 'COUNT', 1, 'STREAMS', stream, '>'); // holds one entry
    await new Promise((r) => setTimeout(r, 80));
    const d = await drainer({ claimIdleMs: 60_000, forgetConsumerIdleMs: 50 }); // too soon to claim the holder's entry
    expect(await waitFor(async () => !(await consumers()).includes('ghost'), 3000), 'ghost removed').to.equal(true);
    expect(await waitFor(async () => (await consumers()).includes(d.consumer), 3000), 'the drainer itself reads on').to.equal(true);
    expect(await consumers()).to.include('holder');
    expect((await stats()).pending).to.equal(1);
  });

  it('writes events that trickle in as a few batches, not one insert each', async () => {
    const pg = new Pool({ connectionString: process.env.DATABASE_URL });
    let inserts = 0;
    const counting = Object.assign(Object.create(pg) as Pool, {
      query: (...args: Parameters<Pool['query']>) => {
        inserts++;
        return (pg.query as (...a: unknown[]) => unknown)(...args);
      },
    });
    try {
      const interval = 1000;
      await drainer({ batchIntervalMs: interval, pool: counting });
      const recs = Array.from({ length: 12 }, () => record());
      const started = Date.now();
      for (const r of recs) {
        await appendUsage(env().redis, r, stream);
        await new Promise((res) => setTimeout(res, 10));
      }
      const span = Date.now() - started;
      await drained();
      expect(await rowsFor(recs.map((r) => r.requestId))).to.equal(12);
      // a read at most every `interval` ms: the first event alone, then one batch per interval the
      // trickle lasted (however slow this machine made it). Reading at once after each batch gives ~12.
      expect(inserts, `inserts for 12 events over ${span} ms`).to.be.at.most(2 + Math.ceil(span / interval));
    } finally {
      await pg.end();
    }
  });

  it('writes one row for a request id that is in the outbox twice, in one batch or across batches', async () => {
    const twice = record();
    const other = record();
    for (const r of [twice, twice, other, twice]) await appendUsage(env().redis, r, stream);
    await drainer({ count: 2 }); // batches [twice, twice] and [other, twice]
    await drained();
    expect(await rowsFor([twice.requestId])).to.equal(1);
    expect(await rowsFor([other.requestId])).to.equal(1);
  });

  it('moves an entry Postgres refuses (or that is no usage record) to the dead-letter stream; the rest are written', async () => {
    const first = record();
    const poison = record({ orgId: 'not-a-uuid' });
    const last = record();
    await appendUsage(env().redis, first, stream);
    await appendUsage(env().redis, poison, stream);
    const garbled = (await env().redis.xadd(stream, '*', 'u', '{"requestId":'))!;
    await appendUsage(env().redis, last, stream);
    await drainer(); // all four in one batch: the batch fails, then each entry alone
    await drained();
    expect(await rowsFor([first.requestId, last.requestId])).to.equal(2);
    expect(await rowsFor([poison.requestId])).to.equal(0);
    const letters = await env().redis.xrange(dead, '-', '+');
    const byId = new Map(letters.map(([, f]) => [f[f.indexOf('id') + 1], f[f.indexOf('error') + 1]]));
    expect(byId.get(garbled)).to.equal('not a usage record');
    expect([...byId.values()].find((e) => e !== 'not a usage record')).to.match(/^22P02: invalid input syntax for type uuid/);
    expect(byId.size).to.equal(2);
    expect((await stats()).deadLetters).to.equal(2);
    // a later entry still goes through
    const after = record();
    await appendUsage(env().redis, after, stream);
    await drained();
    expect(await rowsFor([after.requestId])).to.equal(1);
  });

  it('keeps a batch pending, dead-letters nothing, while Postgres is unreachable; it is written once it is back', async () => {
    const recs = [record(), record()];
    for (const r of recs) await appendUsage(env().redis, r, stream);
    const unreachable = new Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', connectionTimeoutMillis: 500 });
    unreachable.on('error', () => undefined);
    try {
      const down = await drainer({ pool: unreachable });
      // read, failed, and read again from its own pending entries after a pause
      const retried = await waitFor(async () => {
        const p = (await env().redis.xpending(stream, OUTBOX_GROUP, '-', '+', 10, down.consumer)) as Array<[string, string, number, number]>;
        return p.length === 2 && p.every(([, , , deliveries]) => deliveries >= 2);
      }, 10_000);
      expect(retried).to.equal(true);
      expect((await stats()).deadLetters).to.equal(0);
      expect(await rowsFor(recs.map((r) => r.requestId))).to.equal(0);
      await down.stop(); // it stops with the batch still pending under its name
      expect((await stats()).pending).to.equal(2);
    } finally {
      await unreachable.end();
    }
    await drainer({ claimIdleMs: 300 });
    await drained();
    expect(await rowsFor(recs.map((r) => r.requestId))).to.equal(2);
    expect((await stats()).deadLetters).to.equal(0);
  });
});
