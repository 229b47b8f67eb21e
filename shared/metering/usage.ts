import { Pool } from 'pg';
import type { RedisClient } from '../redis/connection';
import type { JobEnvelope } from '../queues/payloads';
import { config } from '../config/env';
import { appendUsage } from './usage-outbox';

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
}

/** What a processor states about its request's usage; the rest comes from the job. */
export type UsageFields = Pick<UsageRecord, 'inputTokens' | 'outputTokens' | 'units' | 'passthrough' | 'deployment'>;

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
 * Inserts usage events into Postgres in one statement, idempotently: the request id is unique, so a
 * replayed entry (or the same request twice in one batch) is a no-op. The UsageDrainer calls it with
 * each batch from the outbox; tests that date events call it directly.
 */
export async function insertUsage(rows: UsageRecord | UsageRecord[], db: Pool = usagePool()): Promise<void> {
  const list = Array.isArray(rows) ? rows : [rows];
  if (!list.length) return;
  const json = list.map((u) => ({
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
  }));
  await db.query(
    `INSERT INTO usage_events (id, request_id, org_id, project_id, api_key_id, model, modality, lane, input_tokens, output_tokens, units, passthrough, deployment, created_at)
     SELECT gen_random_uuid(), r.request_id, r.org_id, r.project_id, r.api_key_id, r.model, r.modality, r.lane, r.input_tokens, r.output_tokens, r.units, r.passthrough, r.deployment, now()
       FROM jsonb_to_recordset($1::jsonb) AS r(request_id text, org_id uuid, project_id uuid, api_key_id uuid, model text, modality text, lane text,
                                               input_tokens integer, output_tokens integer, units jsonb, passthrough boolean, deployment text)
     ON CONFLICT (request_id) DO NOTHING`,
    [JSON.stringify(json)],
  );
}

/** The fields of a usage event that every job carries in its envelope. */
type JobIdentity = Pick<JobEnvelope, 'requestId' | 'orgId' | 'projectId' | 'apiKeyId' | 'publicModel' | 'lane' | 'batch'>;

/** The one usage event of a job: its identity from the envelope, the rest as given. */
export function jobUsage(job: JobIdentity, modality: string, fields: UsageFields): UsageRecord {
  const record: UsageRecord = {
    requestId: job.requestId,
    orgId: job.orgId,
    projectId: job.projectId,
    apiKeyId: job.apiKeyId,
    model: job.publicModel,
    lane: job.lane,
    modality,
    ...fields,
  };
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
  return { ...u, units };
}

/**
 * Adds the usage event of a job to the outbox now (one XADD), for a processor whose usage must be
 * durable before something other than its result publish (systemone: right after the wallet charge).
 * Most processors instead hand their usage to `ctx.usage`, which adds it with the result publish.
 */
export async function recordJobUsage(redis: RedisClient, job: JobIdentity, modality: string, fields: UsageFields): Promise<void> {
  await appendUsage(redis, jobUsage(job, modality, fields));
}
