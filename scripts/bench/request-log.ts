/**
 * Request log benchmark (issue 32, "Tables that stay fast"): `npm run bench:request-log`. Not a test:
 * it prints figures for docs/benchmark.md.
 *
 *   1. Drainer throughput: ENTRIES usage outbox entries, each a usage event carrying its request log
 *      row (what a worker writes), drained by one UsageDrainer (and then by two) into Postgres.
 *   2. LOG_ROWS request log rows and USAGE_ROWS usage events generated over 30 days (generate_series),
 *      1,000 orgs with one big org (a tenth of the traffic), the closed days rolled up; then the
 *      reads: one org's last hour and one key's last day from the log (every row, and the first
 *      Activity page), and the dashboard usage page's month (shared/billing/usage-figures.ts).
 *
 * Needs DATABASE_URL (a server where it may create and drop the database `<name>_reqlog_bench`) and
 * REDIS_URL (it uses a REDIS_PREFIX of its own). KEEP=1 keeps the database for a second run of step 2's reads.
 */
import crypto from 'crypto';
import { Client } from 'pg';
import { QueryTypes } from 'sequelize';
import { config } from '../../shared/config/env';
import { db, closeDb } from '../../shared/db/sequelize';
import { migrate } from '../../shared/db/migrate';
import { createRedis } from '../../shared/redis/connection';
import { keys } from '../../shared/redis/keys';
import { OUTBOX_GROUP, outboxStats } from '../../shared/metering/usage-outbox';
import { UsageDrainer } from '../../shared/metering/usage-drainer';
import { ensureDayPartitions } from '../../shared/db/partitions';
import { rollupDay, addDays, utcDay } from '../../shared/metering/rollups';
import { listRequestLogs } from '../../shared/metering/request-log-query';
import { orgUsageBetween } from '../../shared/billing/usage-figures';
import { dropDatabase } from '../services/postgres';

const ENTRIES = Number(process.env.ENTRIES ?? 50_000);
const LOG_ROWS = Number(process.env.LOG_ROWS ?? 10_000_000);
const USAGE_ROWS = Number(process.env.USAGE_ROWS ?? 10_000_000);
const DAYS = 30;
const RUNS = 7;

const baseUrl = process.env.DATABASE_URL;
if (!baseUrl || !process.env.REDIS_URL) {
  process.stderr.write('DATABASE_URL and REDIS_URL must be set (a server where the bench may create a database of its own)\n');
  process.exit(1);
}
const url = new URL(baseUrl);
const dbName = `${url.pathname.slice(1) || 'postgres'}_reqlog_bench`;
const benchUrl = Object.assign(new URL(baseUrl), { pathname: `/${dbName}` }).toString();
process.env.DATABASE_URL = benchUrl;
process.env.SECRET_KEY ??= 'bench-secret-key-bench-secret-key-0123456789'; // nothing is sealed here
process.env.REDIS_PREFIX = `reqlogbench${crypto.randomBytes(2).toString('hex')}`;

const say = (s: string) => process.stdout.write(`${s}\n`);
const ms = (t: bigint) => Number(t) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; out: T }> {
  const t = process.hrtime.bigint();
  const out = await run();
  return { ms: ms(process.hrtime.bigint() - t), out };
}

/** Median of RUNS runs after one warm-up (a cold first read is reported apart). */
async function readFigure(name: string, run: () => Promise<number>, goalMs: number): Promise<void> {
  const cold = await timed(run);
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = await timed(run);
    times.push(t.ms);
    rows = t.out;
  }
  const m = median(times);
  say(`  ${name}: ${rows} rows, median ${m.toFixed(1)} ms (cold ${cold.ms.toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms) goal < ${goalMs} ms ${m < goalMs ? 'MET' : 'MISSED'}`);
}

async function main(): Promise<void> {
  const admin = new Client({ connectionString: baseUrl });
  await admin.connect();
  if (!process.env.KEEP || !(await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rowCount) {
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${dbName}"`);
  }
  await admin.end();

  // config() reads the environment on first use: DATABASE_URL points at the bench database by now
  config();
  await migrate(db());
  const today = utcDay(new Date());
  for (const t of ['usage_events', 'request_logs'] as const) await ensureDayPartitions(t, addDays(today, -DAYS), DAYS + 2);
  const redis = createRedis('command');

  // 1. drainer throughput
  say(`drainer: ${ENTRIES} outbox entries, each a usage event with its request log row`);
  for (const drainers of [1, 2]) {
    const stream = `${keys.usageOutbox()}:bench-${drainers}`;
    const dead = `${keys.usageDeadLetters()}:bench-${drainers}`;
    await redis.del(stream, dead);
    await redis.xgroup('CREATE', stream, OUTBOX_GROUP, '0', 'MKSTREAM');
    const orgId = crypto.randomUUID();
    const now = Date.now();
    for (let i = 0; i < ENTRIES; i += 1000) {
      const p = redis.pipeline();
      for (let j = i; j < Math.min(ENTRIES, i + 1000); j++) {
        const u = {
          requestId: `req_bench_${drainers}_${j}`, orgId, projectId: null, apiKeyId: crypto.randomUUID(), model: 'sim-chat', modality: 'chat', lane: 'interactive',
          inputTokens: 20, outputTokens: 80, deployment: 'sim-chat-1',
          log: { receivedAt: now - 200, admittedAt: now - 199, route: '/v1/chat/completions', dialect: 'openai-chat', userId: null, status: 200, stream: false, attempts: 1,
            deployment: 'sim-chat-1', laneMs: 1, queueMs: 2, ttfbMs: 150, totalMs: 200 },
        };
        p.xadd(stream, '*', 'u', JSON.stringify(u));
      }
      await p.exec();
    }
    const ds = Array.from({ length: drainers }, (_, i) => new UsageDrainer({ stream, deadLetters: dead, consumer: `bench-${i}`, count: 500 }));
    const t = await timed(async () => {
      await Promise.all(ds.map((d) => d.start()));
      for (;;) {
        const s = await outboxStats(redis, stream, dead);
        if (s.entries === 0 && s.pending === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    await Promise.all(ds.map((d) => d.stop()));
    const [{ n }] = (await db().query('SELECT count(*)::int AS n FROM request_logs WHERE org_id = :orgId', { replacements: { orgId }, type: QueryTypes.SELECT })) as Array<{ n: number }>;
    say(`  ${drainers} drainer(s): ${(ENTRIES / (t.ms / 1000)).toFixed(0)} requests/s (${ENTRIES} usage + ${n} log rows in ${(t.ms / 1000).toFixed(2)} s) goal >= 5000 ${ENTRIES / (t.ms / 1000) >= 5000 ? 'MET' : 'MISSED'}`);
    await redis.del(stream, dead);
  }

  // 2. volume
  const orgs = Array.from({ length: 1000 }, () => crypto.randomUUID());
  const big = orgs[0];
  const [{ have }] = (await db().query('SELECT count(*)::bigint AS have FROM request_logs', { type: QueryTypes.SELECT })) as Array<{ have: string }>;
  if (Number(have) < LOG_ROWS) {
    say(`generating ${LOG_ROWS} log rows and ${USAGE_ROWS} usage events over ${DAYS} days`);
    await db().query('CREATE TEMP TABLE bench_orgs (i int PRIMARY KEY, id uuid)');
    await db().query(`INSERT INTO bench_orgs SELECT i - 1, (:orgs::uuid[])[i] FROM generate_series(1, 1000) i`, { replacements: { orgs: `{${orgs.join(',')}}` } });
    // row n of a day: the big org takes every tenth row, the rest spread over the others; 10 keys per org, each a tenth of its rows
    const perDay = (total: number) => Math.ceil(total / DAYS);
    const gen = await timed(async () => {
      for (let d = DAYS - 1; d >= 0; d--) {
        const day = addDays(today, -d);
        const start = new Date(`${day}T00:00:00Z`).getTime();
        const span = d === 0 ? Date.now() - start : 86_400_000;
        await db().query(
          `INSERT INTO request_logs (created_at, request_id, org_id, project_id, api_key_id, user_id, route, dialect, model, deployment, lane, status,
                                     error_code, stream, attempts, lane_ms, queue_ms, ttfb_ms, total_ms, input_tokens, output_tokens, units, cost_micros)
           SELECT to_timestamp((:start + (n::bigint * :span) / :rows) / 1000.0), 'req_gen_' || :day || '_' || n, o.id, NULL,
                  md5(o.id::text || ((n / 10) % 10))::uuid, NULL, '/v1/chat/completions', 'openai-chat', 'sim-chat', 'sim-chat-1', 'interactive',
                  CASE WHEN n % 50 = 0 THEN 429 ELSE 200 END, CASE WHEN n % 50 = 0 THEN 'rate_limited' END, n % 3 = 0, 1, 1, 3, 180, 400, 20, 80, '{}', 60
             FROM generate_series(0, :rows - 1) n JOIN bench_orgs o ON o.i = CASE WHEN n % 10 = 0 THEN 0 ELSE 1 + (n % 999) END`,
          { replacements: { start, span, rows: perDay(LOG_ROWS), day: day.replace(/-/g, '') } },
        );
        await db().query(
          `INSERT INTO usage_events (id, request_id, org_id, project_id, api_key_id, model, modality, lane, input_tokens, output_tokens, units, passthrough, deployment, created_at)
           SELECT gen_random_uuid(), 'req_gen_' || :day || '_' || n, o.id, NULL, md5(o.id::text || ((n / 10) % 10))::uuid, 'sim-chat', 'chat', 'interactive', 20, 80, '{}', false, 'sim-chat-1',
                  to_timestamp((:start + (n::bigint * :span) / :rows) / 1000.0)
             FROM generate_series(0, :rows - 1) n JOIN bench_orgs o ON o.i = CASE WHEN n % 10 = 0 THEN 0 ELSE 1 + (n % 999) END`,
          { replacements: { start, span, rows: perDay(USAGE_ROWS), day: day.replace(/-/g, '') } },
        );
        if (d > 0) await rollupDay(day);
        process.stdout.write('.');
      }
      await db().query('ANALYZE request_logs');
      await db().query('ANALYZE usage_events');
    });
    say(`\n  generated and rolled up in ${(gen.ms / 1000).toFixed(0)} s`);
  } else say(`reusing ${have} log rows (KEEP=1)`);
  const [{ bigOrg }] = (await db().query(
    `SELECT org_id AS "bigOrg" FROM request_logs WHERE created_at > now() - interval '1 hour' AND request_id LIKE 'req_gen_%' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`, { type: QueryTypes.SELECT },
  )) as Array<{ bigOrg: string }>;
  const [{ key }] = (await db().query(
    `SELECT api_key_id AS key FROM request_logs WHERE org_id = :org AND created_at > now() - interval '1 day' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
    { type: QueryTypes.SELECT, replacements: { org: bigOrg ?? big } },
  )) as Array<{ key: string }>;
  const hourAgo = () => new Date(Date.now() - 3_600_000);
  const dayAgo = () => new Date(Date.now() - 86_400_000);
  /** Every row of a filter, page after page (as the API's cursor walk reads it). */
  const every = async (f: Parameters<typeof listRequestLogs>[0]) => {
    let n = 0;
    let cursor: string | undefined;
    do {
      const p = await listRequestLogs(f, { limit: 500, cursor });
      n += p.rows.length;
      cursor = p.next ?? undefined;
    } while (cursor);
    return n;
  };
  say('reads (the biggest org: a tenth of all traffic)');
  await readFigure("one org, newest first without a time range (the Activity page's default), first page (50)", async () => (await listRequestLogs({ orgId: bigOrg }, { limit: 50 })).rows.length, 100);
  await readFigure("one org's last hour, first Activity page (50)", async () => (await listRequestLogs({ orgId: bigOrg, from: hourAgo() }, { limit: 50 })).rows.length, 100);
  await readFigure("one org's last hour, every row (pages of 500)", () => every({ orgId: bigOrg, from: hourAgo() }), 100);
  await readFigure("one key's last day, first Activity page (50)", async () => (await listRequestLogs({ orgId: bigOrg, apiKeyId: key, from: dayAgo() }, { limit: 50 })).rows.length, 100);
  await readFigure("one key's last day, every row (pages of 500)", () => every({ orgId: bigOrg, apiKeyId: key, from: dayAgo() }), 100);
  await readFigure("one org's last hour, every row in one query", async () => (await listRequestLogs({ orgId: bigOrg, from: hourAgo() }, { limit: 100_000 })).rows.length, 100);
  await readFigure("one key's last day, every row in one query", async () => (await listRequestLogs({ orgId: bigOrg, apiKeyId: key, from: dayAgo() }, { limit: 100_000 })).rows.length, 100);
  await readFigure('dashboard usage page, the month (30 days, closed days from rollups)', async () => (await orgUsageBetween(bigOrg, addDays(today, -(DAYS - 1)), addDays(today, 1))).rows.length, 200);

  redis.disconnect();
  await closeDb();
  if (!process.env.KEEP) await dropDatabase(baseUrl!, dbName);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
