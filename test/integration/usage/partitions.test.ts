import crypto from 'crypto';
import { expect } from 'chai';
import { Pool } from 'pg';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';
import { keys } from '../../../shared/redis/keys';
import { insertUsage, type UsageRecord } from '../../../shared/metering/usage';
import { appendRequestLog, appendUsage, OUTBOX_GROUP, outboxStats } from '../../../shared/metering/usage-outbox';
import { UsageDrainer } from '../../../shared/metering/usage-drainer';
import { usageSource } from '../../../shared/metering/usage-source';
import { checkDefaultPartitions, dayPartitions, defaultPartitionRows, dropExpiredPartitions, ensureDayPartitions } from '../../../shared/db/partitions';
import type { RequestLogEntry, RequestLogFields } from '../../../shared/metering/request-log';
import { CLOCK_TASKS } from '../../../workers/cron/clock';
import { addDays, utcDay } from '../../../shared/metering/rollups';

const count = async (sql: string, replacements: Record<string, unknown>) =>
  Number((await db().query<{ n: string }>(sql, { type: QueryTypes.SELECT, replacements }))[0].n);

const logFields = (over: Partial<RequestLogFields> = {}): RequestLogFields => ({
  receivedAt: Date.now(), route: '/v1/chat/completions', dialect: 'openai-chat', userId: null, status: 200, attempts: 1, ...over,
});

describe('partitioned usage_events and request_logs: retention and outages', () => {
  it('retention drops whole day partitions (no DELETE) and the rollups keep the figures', async () => {
    const orgId = crypto.randomUUID();
    const days = ['2001-02-03', '2001-02-04'];
    await ensureDayPartitions('usage_events', days[0], 2);
    await ensureDayPartitions('request_logs', days[0], 2);
    const at = (day: string, h: number) => Date.parse(`${day}T${String(h).padStart(2, '0')}:00:00Z`);
    const rec = (day: string, h: number, tokens: number): UsageRecord => ({
      requestId: `req_ret_${crypto.randomBytes(6).toString('hex')}`, orgId, projectId: null, apiKeyId: null, model: 'sim-chat', modality: 'chat',
      lane: 'interactive', inputTokens: tokens, outputTokens: 2 * tokens, at: at(day, h),
    });
    await insertUsage([rec(days[0], 1, 10), rec(days[0], 23, 5), rec(days[1], 12, 7)]);
    const logStream = `${keys.usageOutbox()}:test-ret-${crypto.randomBytes(3).toString('hex')}`;
    const entry: RequestLogEntry = { ...logFields({ receivedAt: at(days[0], 3), status: 429, errorCode: 'rate_limited' }), requestId: `req_ret_${crypto.randomBytes(6).toString('hex')}`, orgId, projectId: null, apiKeyId: null, model: 'sim-chat', lane: null };
    await env().redis.xgroup('CREATE', logStream, OUTBOX_GROUP, '0', 'MKSTREAM');
    await appendRequestLog(env().redis, entry, logStream);
    const d = new UsageDrainer({ stream: logStream, deadLetters: `${logStream}:dead`, consumer: 'ret' });
    await d.start();
    try {
      expect(await waitFor(async () => (await count('SELECT count(*) AS n FROM request_logs WHERE org_id = :orgId', { orgId })) === 1, 10_000)).to.equal(true);
    } finally {
      await d.stop();
      await env().redis.del(logStream, `${logStream}:dead`);
    }
    const month = { orgId, from: new Date('2001-02-01T00:00:00Z'), to: new Date('2001-03-01T00:00:00Z') };
    const totals = async () => {
      const src = await usageSource(month);
      const [row] = await db().query<Record<string, string>>(`SELECT sum(requests) AS requests, sum(input_tokens) AS input, sum(output_tokens) AS output FROM (${src.sql}) s`, {
        type: QueryTypes.SELECT, replacements: src.replacements,
      });
      return { requests: Number(row.requests), input: Number(row.input), output: Number(row.output) };
    };
    expect(await totals()).to.deep.equal({ requests: 3, input: 22, output: 44 });

    // the clock, ten days later with 5 days kept: both days go, the first one without its rollups ever having run
    const now = new Date('2001-02-14T12:00:00Z');
    expect(await dropExpiredPartitions('usage_events', 5, now)).to.include.members(days);
    expect(await dropExpiredPartitions('request_logs', 5, now)).to.include.members(days);
    for (const t of ['usage_events', 'request_logs'] as const) {
      expect((await dayPartitions(t)).map((p) => p.day)).not.to.include.members([days[0]]);
      expect((await dayPartitions(t)).map((p) => p.day)).not.to.include.members([days[1]]);
    }
    expect(await count('SELECT count(*) AS n FROM usage_events WHERE org_id = :orgId', { orgId })).to.equal(0);
    expect(await count('SELECT count(*) AS n FROM request_logs WHERE org_id = :orgId', { orgId })).to.equal(0);
    expect(await totals(), 'the month still adds up, from the rollups').to.deep.equal({ requests: 3, input: 22, output: 44 });
    // today's partitions are untouched
    const today = new Date().toISOString().slice(0, 10);
    expect((await dayPartitions('usage_events')).map((p) => p.day)).to.include(today);
  });

  it('the clock task "partitions" creates the days ahead that are missing', async () => {
    const task = CLOCK_TASKS.find((t) => t.name === 'partitions');
    expect(task, 'registered in CLOCK_TASKS').to.not.equal(undefined);
    const ahead = addDays(utcDay(new Date()), 6);
    const name = `request_logs_p${ahead.replace(/-/g, '')}`;
    await db().query(`DROP TABLE IF EXISTS "${name}"`); // a future day: no rows
    expect((await dayPartitions('request_logs')).map((p) => p.day)).not.to.include(ahead);
    await task!.run(env().redis);
    expect((await dayPartitions('request_logs')).map((p) => p.day)).to.include(ahead);
    expect((await dayPartitions('usage_events')).map((p) => p.day)).to.include(addDays(ahead, 1));
  });

  it('rows in a DEFAULT partition (a day without its own) are a gateway doctor warning until moved', async () => {
    const requestId = `req_default_${crypto.randomBytes(6).toString('hex')}`;
    const at = '2001-02-03T04:05:06Z';
    const status = async () => (await checkDefaultPartitions()).find((c) => c.name === 'request_logs_default')!;
    const before = (await defaultPartitionRows('request_logs')).rows;
    await db().query(`INSERT INTO request_logs (created_at, request_id, org_id, route, dialect, model, status) VALUES (:at, :requestId, :org, '/v1/models', 'openai', '', 200)`,
      { replacements: { at, requestId, org: crypto.randomUUID() } });
    try {
      const c = await status();
      expect(c.status).to.equal('warn');
      expect(c.detail).to.include(`${before + 1} row(s) from 2001-02-03`);
    } finally {
      await db().query('DELETE FROM request_logs_default WHERE request_id = :requestId', { replacements: { requestId } });
    }
    expect((await status()).status).to.equal(before ? 'warn' : 'ok');
  });

  it('Postgres away then back: usage and log rows are all written once, a replay writes nothing twice', async () => {
    const tag = crypto.randomBytes(4).toString('hex');
    const stream = `${keys.usageOutbox()}:test-${tag}`;
    const dead = `${keys.usageDeadLetters()}:test-${tag}`;
    await env().redis.xgroup('CREATE', stream, OUTBOX_GROUP, '0', 'MKSTREAM');
    const orgId = crypto.randomUUID();
    const id = () => `req_away_${crypto.randomBytes(6).toString('hex')}`;
    const billed: UsageRecord[] = Array.from({ length: 3 }, () => ({
      requestId: id(), orgId, projectId: null, apiKeyId: null, model: 'sim-chat', modality: 'chat', lane: 'interactive', inputTokens: 3, outputTokens: 4,
      log: logFields({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736' }),
    }));
    const refused: RequestLogEntry = { ...logFields({ status: 402, errorCode: 'insufficient_credits' }), requestId: id(), orgId, projectId: null, apiKeyId: null, model: 'sim-chat', lane: null };
    const append = async () => {
      for (const u of billed) await appendUsage(env().redis, u, stream);
      await appendRequestLog(env().redis, refused, stream);
    };
    await append();
    const unreachable = new Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', connectionTimeoutMillis: 500 });
    unreachable.on('error', () => undefined);
    const down = new UsageDrainer({ stream, deadLetters: dead, consumer: `down-${tag}`, pool: unreachable });
    await down.start();
    try {
      const retried = await waitFor(async () => {
        const p = (await env().redis.xpending(stream, OUTBOX_GROUP, '-', '+', 10, down.consumer)) as Array<[string, string, number, number]>;
        return p.length === 4 && p.every(([, , , deliveries]) => deliveries >= 2);
      }, 10_000);
      expect(retried, 'read, failed, read again').to.equal(true);
      await down.stop();
    } finally {
      await unreachable.end();
    }
    expect(await count('SELECT count(*) AS n FROM request_logs WHERE org_id = :orgId', { orgId })).to.equal(0);

    const up = new UsageDrainer({ stream, deadLetters: dead, consumer: `up-${tag}`, claimIdleMs: 300 });
    await up.start();
    const drained = () => waitFor(async () => {
      const s = await outboxStats(env().redis, stream, dead);
      return s.entries === 0 && s.pending === 0;
    }, 10_000);
    try {
      expect(await drained()).to.equal(true);
      await append(); // the same entries again (a replay): nothing new
      expect(await drained()).to.equal(true);
    } finally {
      await up.stop();
    }
    expect((await outboxStats(env().redis, stream, dead)).deadLetters).to.equal(0);
    await env().redis.del(stream, dead);
    expect(await count('SELECT count(*) AS n FROM usage_events WHERE org_id = :orgId', { orgId })).to.equal(3);
    expect(await count('SELECT count(*) AS n FROM request_logs WHERE org_id = :orgId', { orgId })).to.equal(4);
    expect(await count("SELECT count(*) AS n FROM request_logs WHERE org_id = :orgId AND trace_id = '4bf92f3577b34da6a3ce929d0e0e4736' AND input_tokens = 3", { orgId })).to.equal(3);
    expect(await count("SELECT count(*) AS n FROM request_logs WHERE org_id = :orgId AND status = 402 AND error_code = 'insufficient_credits'", { orgId })).to.equal(1);
  });
});
