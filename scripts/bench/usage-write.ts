/**
 * `npm run bench:usage-write`: what Postgres spends on the usage drainer's statement (a batch of usage
 * events with their request log rows, shared/metering/usage-statement.ts) as the day's partition
 * fills (issue 29, docs/benchmark.md, sixteenth session). ROUNDS (default 8) rounds of BATCHES
 * (default 25) batches of BATCH (default 200) new events each, on one connection with
 * `synchronous_commit=off` as the drainer's pool has it; after each round: the events in the table,
 * the Postgres backend's CPU per event (from /proc: run it on the database's machine), the wall time
 * per event, and how the plan checks a request id already written (per-event index probes, or a join
 * that reads the partition). Not a test: it prints figures.
 *
 * Needs DATABASE_URL (a server where it may create and drop the database `<name>_usagewrite_bench`).
 */
import crypto from 'crypto';
import { Client } from 'pg';
import { config } from '../../shared/config/env';
import { db, closeDb } from '../../shared/db/sequelize';
import { migrate } from '../../shared/db/migrate';
import { ensureDayPartitions } from '../../shared/db/partitions';
import { addDays, utcDay } from '../../shared/metering/rollups';
import { usageStatement } from '../../shared/metering/usage-statement';
import type { UsageRecord } from '../../shared/metering/usage';
import { dropDatabase, ensureDatabase } from '../services/postgres';
import { processCpuMs } from './cpu';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const BATCHES = Number(process.env.BATCHES ?? 25);
const BATCH = Number(process.env.BATCH ?? 200);

const baseUrl = process.env.DATABASE_URL;
if (!baseUrl) {
  process.stderr.write('DATABASE_URL must be set (a server where the bench may create a database of its own)\n');
  process.exit(1);
}
const dbName = `${new URL(baseUrl).pathname.slice(1) || 'postgres'}_usagewrite_bench`;
process.env.SECRET_KEY ??= 'bench-secret-key-bench-secret-key-0123456789'; // nothing is sealed here
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379'; // required by the configuration; never connected to

const say = (s: string) => process.stdout.write(`${s}\n`);

function batch(orgId: string, keyId: string): UsageRecord[] {
  const now = Date.now();
  return Array.from({ length: BATCH }, () => ({
    requestId: `req_${crypto.randomBytes(12).toString('hex')}`, orgId, projectId: null, apiKeyId: keyId, model: 'sim-chat', modality: 'chat', lane: 'interactive',
    inputTokens: 9, outputTokens: 14, passthrough: false, deployment: 'simulator',
    log: { receivedAt: now, admittedAt: now, route: '/v1/chat/completions', dialect: 'openai-chat', userId: null, traceId: null, batchId: null, status: 200, stream: false,
      attempts: 1, deployment: 'simulator', laneMs: 1, queueMs: 2, ttfbMs: 6, totalMs: 6, cachedTokens: null, reasoningTokens: null },
  }));
}

/** How the usage insert checks a request id already written: the plan nodes that read usage_events. */
async function checkOf(c: Client, orgId: string, keyId: string): Promise<string> {
  const s = usageStatement(batch(orgId, keyId))!;
  const { rows } = await c.query(`EXPLAIN (FORMAT JSON) ${s.sql}`, s.params);
  const kinds = new Set<string>();
  const walk = (n: Record<string, unknown>) => {
    if (n['Join Type'] === 'Anti') kinds.add(`${n['Node Type']} (anti)`);
    if (n['Node Type'] === 'Seq Scan' && String(n['Relation Name']).startsWith('usage_events_p')) kinds.add('Seq Scan of a partition');
    if (n['Parent Relationship'] === 'SubPlan') kinds.add('per-event subplan');
    for (const child of (n.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  walk((rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0].Plan);
  return [...kinds].join(', ');
}

async function main(): Promise<void> {
  // config() reads DATABASE_URL on first use: the bench's own database by then
  process.env.DATABASE_URL = await ensureDatabase(baseUrl!, dbName, true);
  config();
  await migrate(db());
  for (const t of ['usage_events', 'request_logs'] as const) await ensureDayPartitions(t, addDays(utcDay(new Date()), -1), 3);

  const c = new Client({ connectionString: process.env.DATABASE_URL, options: '-c synchronous_commit=off' });
  await c.connect();
  const pid = (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
  const orgId = crypto.randomUUID();
  const keyId = crypto.randomUUID();
  say(`usage drainer statement, ${ROUNDS} rounds of ${BATCHES} batches of ${BATCH} events, ${new Date().toISOString()}`);
  say('');
  say('| round | events in the table | Postgres CPU µs/event, planned each time | prepared (named) | wall µs/event, planned | prepared | the request id check |');
  say('|---|---|---|---|---|---|---|');
  for (let round = 1; round <= ROUNDS; round++) {
    const plan = await checkOf(c, orgId, keyId);
    // each round: half its batches as an unnamed statement (planned for each batch), half as the
    // drainer's named one (prepared once per connection: Postgres may then keep a generic plan), the
    // two halves in turns (which goes first alternates by round)
    const cpu = [0, 0];
    const wall = [0, 0];
    for (const named of round % 2 ? [0, 1] : [1, 0]) {
      const t0 = processCpuMs(pid);
      const w0 = process.hrtime.bigint();
      for (let i = 0; i < BATCHES / 2; i++) {
        const s = usageStatement(batch(orgId, keyId))!;
        await c.query(named ? { name: s.name, text: s.sql, values: s.params } : { text: s.sql, values: s.params });
      }
      wall[named] = Number(process.hrtime.bigint() - w0) / 1e3;
      cpu[named] = (processCpuMs(pid) - t0) * 1000;
    }
    const n = (BATCHES / 2) * BATCH;
    say(`| ${round} | ${round * BATCHES * BATCH} | ${(cpu[0] / n).toFixed(1)} | ${(cpu[1] / n).toFixed(1)} | ${(wall[0] / n).toFixed(1)} | ${(wall[1] / n).toFixed(1)} | ${plan} |`);
  }
  await c.end();
  await closeDb();
  await dropDatabase(baseUrl!, dbName);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
