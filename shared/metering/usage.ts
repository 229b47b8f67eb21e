import { Pool } from 'pg';
import type { RedisClient } from '../redis/connection';
import type { JobEnvelope } from '../queues/payloads';
import { config } from '../config/env';
import { appendUsage } from './usage-outbox';
import type { RequestLogFields } from './request-log';
import { traceIdOf } from '../tracing/trace';
import { merged } from '../merged';

export interface UsageRecord {
  requestId: string;
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  model: string;
  modality: string;
  lane: string | null;
  inputTokens?: number;
  outputTokens?: number;
  units?: Record<string, number>;
  passthrough?: boolean;
  /** The model pool deployment that served the request (chat-style requests). */
  deployment?: string;
  /** The request's trace id (32 hex) when its pod traced it: the request log's `trace_id`. */
  traceId?: string;
  /** W3C traceparent of the worker's reply span: the drainer's usage write continues the trace. */
  traceParent?: string;
  /** Cached input and reasoning output tokens, where the upstream reports them (request log only). */
  cachedTokens?: number;
  reasoningTokens?: number;
  /**
   * Dates the event (epoch ms) instead of the time of the insert (imports, tests). The drainer leaves
   * it unset: an event is stamped when it is written, so it never lands in a day the rollups closed.
   */
  at?: number;
  /** The request's log row (shared/metering/request-log.ts), carried in the same outbox entry. */
  log?: RequestLogFields;
  /** Its job's `unreserved`: no budget or rate reservation to settle (shared/limits/limits.ts settleUsage). */
  unreserved?: true;
}

/** What a processor states about its request's usage; the rest comes from the job. */
export type UsageFields = Pick<UsageRecord, 'inputTokens' | 'outputTokens' | 'units' | 'passthrough' | 'deployment' | 'cachedTokens' | 'reasoningTokens'>;

let pool: Pool | undefined;

/**
 * Usage writes have a pool of their own with `synchronous_commit=off`: the insert returns once the
 * rows are in Postgres's WAL buffer instead of waiting for the disk flush (about 4 ms here under load).
 * Only a crash of Postgres itself within ~3 × wal_writer_delay (600 ms) of the write could drop
 * rows the drainer has already taken off the outbox. Set USAGE_SYNCHRONOUS_COMMIT=on to wait for
 * the flush instead.
 */
export function usagePool(): Pool {
  if (!pool) {
    const sync = process.env.USAGE_SYNCHRONOUS_COMMIT === 'on' ? 'on' : 'off';
    pool = new Pool({ connectionString: config().databaseUrl, max: 8, options: `-c synchronous_commit=${sync}` });
    pool.on('error', () => undefined); // an idle client's error is retried on next use
  }
  return pool;
}

export async function closeUsagePool(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.end();
}

/**
 * How far apart two events of one request id may be dated and still be recognised as one: the key
 * is (request_id, created_at) on the day-partitioned table, so an event is also skipped when its
 * request id is already there within this window (an entry added twice, or inserted by hand).
 */
const SAME_REQUEST_WINDOW = "interval '1 day'";

/** The rows of usage events as the `$n::jsonb` parameter of usageInsertSql. */
export function usageRows(list: UsageRecord[]): string {
  return JSON.stringify(list.map((u) => ({
    request_id: u.requestId,
    org_id: u.orgId,
    project_id: u.projectId,
    api_key_id: u.apiKeyId,
    model: u.model,
    modality: u.modality,
    lane: u.lane,
    input_tokens: u.inputTokens ?? 0,
    output_tokens: u.outputTokens ?? 0,
    units: u.units ?? {},
    passthrough: u.passthrough ?? false,
    deployment: u.deployment ?? null,
    at: u.at === undefined ? null : new Date(u.at).toISOString(),
  })));
}

/**
 * The INSERT of usage events from parameter `param` (usageRows), idempotent: one row per request id
 * in the batch, none for a request id already within SAME_REQUEST_WINDOW of the event (a replayed
 * outbox entry is written again within minutes), and (request_id, created_at) conflicts do nothing.
 * created_at is the time of the insert, or the record's `at` when given.
 *
 * The check of a request id already there is an index probe per row (the unique (request_id,
 * created_at) index of each day's partition), whatever the table holds: `OFFSET 0` keeps the
 * NOT EXISTS a per-row subplan. Without it the planner may turn it into a hash anti-join, which reads
 * every partition of usage_events whole on every batch (it did inside the drainer's statement, where
 * the usage insert is a CTE, until the day's partition held about 85,000 events: Postgres CPU per
 * event grew from 62 to 188 µs as it filled; fenced, 70-77 µs at any size. `npm run
 * bench:usage-write`, docs/benchmark.md, issue 29, sixteenth session).
 */
export function usageInsertSql(param: string): string {
  return `INSERT INTO usage_events (id, request_id, org_id, project_id, api_key_id, model, modality, lane, input_tokens, output_tokens, units, passthrough, deployment, created_at)
     SELECT gen_random_uuid(), r.request_id, r.org_id, r.project_id, r.api_key_id, r.model, r.modality, r.lane, r.input_tokens, r.output_tokens, r.units, r.passthrough, r.deployment, r.at
       FROM (SELECT DISTINCT ON (request_id) request_id, org_id, project_id, api_key_id, model, modality, lane, input_tokens, output_tokens, units, passthrough, deployment, coalesce(at, now()) AS at
               FROM jsonb_to_recordset(${param}::jsonb) AS j(request_id text, org_id uuid, project_id uuid, api_key_id uuid, model text, modality text, lane text,
                                                  input_tokens integer, output_tokens integer, units jsonb, passthrough boolean, deployment text, at timestamptz)
              ORDER BY request_id, at) AS r
      WHERE NOT EXISTS (SELECT 1 FROM usage_events e WHERE e.request_id = r.request_id
                           AND e.created_at > r.at - ${SAME_REQUEST_WINDOW} AND e.created_at < r.at + ${SAME_REQUEST_WINDOW} OFFSET 0)
     ON CONFLICT (request_id, created_at) DO NOTHING`;
}

/**
 * Inserts usage events into Postgres in one statement, idempotently (usageInsertSql). The UsageDrainer
 * writes each batch with its request log rows in one statement (shared/metering/outbox-write.ts); tests
 * that date events call this directly.
 */
export async function insertUsage(rows: UsageRecord | UsageRecord[], db: Pool = usagePool()): Promise<void> {
  const list = Array.isArray(rows) ? rows : [rows];
  if (!list.length) return;
  await db.query(usageInsertSql('$1'), [usageRows(list)]);
}

/** The fields of a usage event that every job carries in its envelope. */
type JobIdentity = Pick<JobEnvelope, 'requestId' | 'orgId' | 'projectId' | 'apiKeyId' | 'publicModel' | 'usageModel' | 'lane' | 'batch' | 'unreserved'>;

/**
 * The one usage event of a job: its identity from the envelope, the rest as given. Its model is the
 * catalog model served (a routing plan's alias as the model it names): every reader of the ledger
 * prices an event by its model.
 */
export function jobUsage(job: JobIdentity, modality: string, fields: UsageFields): UsageRecord {
  const record: UsageRecord = {
    requestId: job.requestId,
    orgId: job.orgId,
    projectId: job.projectId,
    apiKeyId: job.apiKeyId,
    model: job.usageModel ?? job.publicModel,
    lane: job.lane,
    modality,
    ...fields,
  };
  if (job.unreserved) record.unreserved = true;
  return job.batch ? batchPriced(record, job.batch) : record;
}

/**
 * A batch line's event: every reader of the ledger prices an event as tokens (and audio seconds) at
 * the model's prices plus `units.cost_micros`, so the batch discount is stated there, negative:
 * the event then costs the model's price times the plan's multiplier wherever it is read.
 * `units.batch` (1) marks the event as a batch line.
 */
function batchPriced(u: UsageRecord, b: NonNullable<JobIdentity['batch']>): UsageRecord {
  const units = { ...(u.units ?? {}) };
  const full = (u.inputTokens ?? 0) * (b.prices.input_token ?? 0) + (u.outputTokens ?? 0) * (b.prices.output_token ?? 0)
    + ((units.audio_duration_ms ?? 0) / 1000) * (b.prices.audio_second ?? 0) + (units.cost_micros ?? 0);
  units.cost_micros = (units.cost_micros ?? 0) - full * (1 - b.multiplier);
  units.batch = 1;
  return merged(u, { units });
}

/**
 * Adds the usage event of a job to the outbox now (one XADD), for a processor whose usage must be
 * durable before something other than its result publish (systemone: right after the wallet charge).
 * Most processors instead hand their usage to `ctx.usage`, which adds it with the result publish.
 * `attempts`: the upstream attempts a model pool's router made (the request log row's).
 */
export async function recordJobUsage(redis: RedisClient, job: JobIdentity & Pick<JobEnvelope, 'log' | 'trace' | 'stream'>, modality: string, fields: UsageFields, attempts = 1): Promise<void> {
  const usage = jobUsage(job, modality, fields);
  const ctx = job.log;
  if (ctx) {
    // its request log row, with the times known here (the job's own are not: no queue or first-byte split)
    usage.log = merged(ctx, { traceId: traceIdOf(job.trace) ?? ctx.traceId ?? null, status: 200, stream: job.stream, attempts,
      laneMs: ctx.admittedAt === undefined ? null : ctx.admittedAt - ctx.receivedAt, totalMs: Date.now() - ctx.receivedAt,
      cachedTokens: usage.cachedTokens ?? null, reasoningTokens: usage.reasoningTokens ?? null });
  }
  await appendUsage(redis, usage);
}
