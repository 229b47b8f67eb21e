import { Pool } from 'pg';
import type { JobEnvelope } from '../queues/payloads';
import { config } from '../config/env';

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
}

let pool: Pool | undefined;

/**
 * Usage writes have a pool of their own with `synchronous_commit=off`: the insert returns once the
 * row is in Postgres's WAL buffer instead of waiting for the disk flush (about 4 ms here under load).
 * A worker or web process that crashes after this returns loses nothing; only a crash of Postgres
 * itself within ~3 × wal_writer_delay (600 ms) of the write could drop it. Set
 * USAGE_SYNCHRONOUS_COMMIT=on to wait for the flush instead.
 */
function usagePool(): Pool {
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
 * Writes one usage event, idempotently: the request id is unique, so a retried job or a replayed
 * write is a no-op. Workers call it before they publish the result, so a crash after the upstream
 * answered still leaves the event, and a retry writes it once.
 */
export async function recordUsage(u: UsageRecord): Promise<void> {
  await usagePool().query(
    `INSERT INTO usage_events (id, request_id, org_id, project_id, api_key_id, model, modality, lane, input_tokens, output_tokens, units, passthrough, created_at)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now())
     ON CONFLICT (request_id) DO NOTHING`,
    [u.requestId, u.orgId, u.projectId, u.apiKeyId, u.model, u.modality, u.lane, u.inputTokens ?? 0, u.outputTokens ?? 0, JSON.stringify(u.units ?? {}), u.passthrough ?? false],
  );
}

/** The fields of a usage event that every job carries in its envelope. */
type JobIdentity = Pick<JobEnvelope, 'requestId' | 'orgId' | 'projectId' | 'apiKeyId' | 'publicModel' | 'lane'>;

/** Writes the one usage event of a job: its identity from the envelope, the rest as given. */
export function recordJobUsage(job: JobIdentity, modality: string, fields: Pick<UsageRecord, 'inputTokens' | 'outputTokens' | 'units' | 'passthrough'>): Promise<void> {
  return recordUsage({
    requestId: job.requestId,
    orgId: job.orgId,
    projectId: job.projectId,
    apiKeyId: job.apiKeyId,
    model: job.publicModel,
    lane: job.lane,
    modality,
    ...fields,
  });
}
