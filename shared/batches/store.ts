import { QueryTypes, type Transaction } from 'sequelize';
import { db } from '../db/sequelize';
import { merged } from '../merged';
import { scopeSql, scopeValues, type StoreScope } from '../tenancy/store-scope';
import type { UsageRecord } from '../metering/usage';
import { usageStatement } from '../metering/usage-statement';
import { ledgerStatement, type LedgerEntry } from '../search/ledger';
import type { HeldSearch } from '../search/reservations';
import { LINE_REQUEST_ID_SQL, lineRequestStem } from './results';

export type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';
export type LineState = 'pending' | 'running' | 'succeeded' | 'errored' | 'canceled' | 'expired';

/** A batch row (`batches`), either dialect. */
export interface BatchRow {
  id: string;
  dialect: 'openai' | 'anthropic';
  org_id: string;
  project_id: string | null;
  api_key_id: string | null;
  key_hash: string;
  routing_plan_id: string | null;
  endpoint: string;
  input_file_id: string | null;
  completion_window: string;
  metadata: Record<string, string> | null;
  status: BatchStatus;
  errors: { object: 'list'; data: { code: string; message: string; line: number | null; param: string | null }[] } | null;
  price_multiplier: string;
  total: number;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: Date;
  expires_at: Date;
  in_progress_at: Date | null;
  finalizing_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  expired_at: Date | null;
  cancelling_at: Date | null;
  cancelled_at: Date | null;
  deleted_at: Date | null;
  /** `output_expires_after.seconds` (OpenAI): its output and error files expire this long after they are written; null: BATCH_FILE_RETENTION_DAYS. */
  output_expires_after_seconds: number | null;
  /** OpenAI's `Batch.model`: the one model its lines name, set with them (shared/batches/input.ts batchModel); null before, or when they name several. */
  model: string | null;
  /** A Message Batch's `anthropic-beta` header at create (migration 0044), sent with each of its lines; null: none. */
  anthropic_beta: string | null;
}

export interface LineRow {
  batch_id: string;
  idx: number;
  custom_id: string;
  body: Record<string, unknown>;
  state: LineState;
  /** Names the request id (lineRequestId): every retry under a new id counts, crash retries and upstream waits. */
  attempt: number;
  /** Of `attempt`, the retries after an upstream provider's 429 (migration 0042): not crash retries. */
  upstream_waits: number;
  status_code: number | null;
  request_id: string | null;
  result: unknown;
}

/** Lines of a batch by state: the request counts of both dialects are read from this. */
export type LineCounts = Record<LineState, number>;

const ACTIVE: BatchStatus[] = ['validating', 'in_progress', 'finalizing', 'cancelling'];

type NewBatch = Omit<BatchRow, 'in_progress_at' | 'finalizing_at' | 'completed_at' | 'failed_at' | 'expired_at' | 'cancelling_at' | 'cancelled_at' | 'deleted_at' | 'errors' | 'output_file_id' | 'error_file_id' | 'output_expires_after_seconds' | 'model' | 'anthropic_beta'> &
  Partial<Pick<BatchRow, 'output_expires_after_seconds' | 'anthropic_beta'>>;

export async function insertBatch(b: NewBatch, lines?: { custom_id: string; body: unknown }[]): Promise<void> {
  await db().transaction(async (t) => {
    await db().query(
      `INSERT INTO batches (id, dialect, org_id, project_id, api_key_id, key_hash, routing_plan_id, endpoint, input_file_id, completion_window, metadata, status, price_multiplier, total, created_at, expires_at, output_expires_after_seconds, anthropic_beta, in_progress_at)
       VALUES (:id, :dialect, :org_id, :project_id, :api_key_id, :key_hash, :routing_plan_id, :endpoint, :input_file_id, :completion_window, :metadata, :status, :price_multiplier, :total, :created_at, :expires_at, :output_expires_after_seconds, :anthropic_beta, ${b.status === 'in_progress' ? ':created_at' : 'NULL'})`,
      { transaction: t, replacements: { ...b, metadata: b.metadata ? JSON.stringify(b.metadata) : null, output_expires_after_seconds: b.output_expires_after_seconds ?? null, anthropic_beta: b.anthropic_beta ?? null } },
    );
    if (lines?.length) await insertLines(t, b.id, lines);
  });
}

/** Inserts lines in chunks of 1,000 (one statement each). */
export async function insertLines(t: Transaction, batchId: string, lines: { custom_id: string; body: unknown }[]): Promise<void> {
  for (let i = 0; i < lines.length; i += 1000) {
    const chunk = lines.slice(i, i + 1000).map((l, j) => ({ idx: i + j, custom_id: l.custom_id, body: l.body }));
    await db().query(
      `INSERT INTO batch_lines (batch_id, idx, custom_id, body)
       SELECT :batchId, r.idx, r.custom_id, r.body FROM jsonb_to_recordset(:rows::jsonb) AS r(idx integer, custom_id text, body jsonb)`,
      { transaction: t, replacements: { batchId, rows: JSON.stringify(chunk) } },
    );
  }
}

/** The scope's batch (another org's or another project's is as unknown as a missing one; shared/tenancy/store-scope.ts). */
export async function getBatch(scope: StoreScope, id: string, dialect: BatchRow['dialect']): Promise<BatchRow | null> {
  const [row] = await db().query<BatchRow>(`SELECT * FROM batches WHERE id = :id AND ${scopeSql(scope)} AND dialect = :dialect AND deleted_at IS NULL`, {
    type: QueryTypes.SELECT,
    replacements: merged(scopeValues(scope), { id, dialect }),
  });
  return row ?? null;
}

export async function batchById(id: string): Promise<BatchRow | null> {
  const [row] = await db().query<BatchRow>('SELECT * FROM batches WHERE id = :id', { type: QueryTypes.SELECT, replacements: { id } });
  return row ?? null;
}

/** Newest first; `after` is the id of the last batch of the previous page (OpenAI's cursor, Anthropic's `after_id`). */
export async function listBatches(scope: StoreScope, dialect: BatchRow['dialect'], opts: { after?: string; before?: string; limit: number }): Promise<BatchRow[]> {
  const mine = 'FROM batches WHERE id = :cursor AND org_id = :orgId'; // another org's id is no cursor
  const cursor = opts.after ? `AND (created_at, id) < (SELECT created_at, id ${mine})` : opts.before ? `AND (created_at, id) > (SELECT created_at, id ${mine})` : '';
  const rows = await db().query<BatchRow>(
    `SELECT * FROM batches WHERE ${scopeSql(scope)} AND dialect = :dialect AND deleted_at IS NULL ${cursor}
     ORDER BY created_at ${opts.before ? 'ASC' : 'DESC'}, id ${opts.before ? 'ASC' : 'DESC'} LIMIT :limit`,
    { type: QueryTypes.SELECT, replacements: merged(scopeValues(scope), { dialect, cursor: opts.after ?? opts.before ?? null, limit: opts.limit }) },
  );
  return opts.before ? rows.reverse() : rows;
}

export async function activeBatchCount(orgId: string): Promise<number> {
  const [row] = await db().query<{ n: string }>(`SELECT count(*) AS n FROM batches WHERE org_id = :orgId AND status IN (:active)`, {
    type: QueryTypes.SELECT,
    replacements: { orgId, active: ACTIVE },
  });
  return Number(row.n);
}

export async function lineCounts(ids: string[]): Promise<Map<string, LineCounts>> {
  const out = new Map<string, LineCounts>();
  for (const id of ids) out.set(id, { pending: 0, running: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
  if (!ids.length) return out;
  const rows = await db().query<{ batch_id: string; state: LineState; n: string }>(
    'SELECT batch_id, state, count(*) AS n FROM batch_lines WHERE batch_id IN (:ids) GROUP BY batch_id, state',
    { type: QueryTypes.SELECT, replacements: { ids } },
  );
  for (const r of rows) out.get(r.batch_id)![r.state] = Number(r.n);
  return out;
}

/** Whether any line of the batch is in one of `states` (an index probe, not a count). */
export async function hasLines(batchId: string, ...states: LineState[]): Promise<boolean> {
  const rows = await db().query('SELECT 1 FROM batch_lines WHERE batch_id = :batchId AND state IN (:states) LIMIT 1', { type: QueryTypes.SELECT, replacements: { batchId, states } });
  return rows.length > 0;
}

/** Moves a batch from one status to another (and stamps `<to>_at`); false when another process did it first. */
export async function transition(id: string, from: BatchStatus[], to: BatchStatus, extra: Record<string, unknown> = {}): Promise<boolean> {
  const sets = Object.keys(extra).map((k) => `${k} = :${k}`);
  const stamp = ['in_progress', 'finalizing', 'completed', 'failed', 'expired', 'cancelling', 'cancelled'].includes(to) ? [`${to}_at = coalesce(${to}_at, now())`] : [];
  const [rows] = await db().query(`UPDATE batches SET ${['status = :to', ...stamp, ...sets].join(', ')} WHERE id = :id AND status IN (:from) RETURNING id`, {
    replacements: { id, from, to, ...extra },
  });
  return (rows as unknown[]).length === 1;
}

export async function markDeleted(id: string): Promise<void> {
  await db().query('UPDATE batches SET deleted_at = now() WHERE id = :id', { replacements: { id } });
}

export async function activeBatches(): Promise<BatchRow[]> {
  return db().query<BatchRow>(`SELECT * FROM batches WHERE status IN (:active) ORDER BY created_at`, { type: QueryTypes.SELECT, replacements: { active: ACTIVE } });
}

/**
 * Claims up to `n` pending lines of a batch for `runner` (SKIP LOCKED, so two runners never take the
 * same line), and takes back lines whose runner stopped refreshing its claim (`staleMs`); only while
 * the batch is `in_progress` and within its window: a runner feeds a batch from the row it read at its last pass, and a line
 * that ends feeds its batch again at once, so without this a batch cancelled (or expired) since went on
 * starting lines that should have been canceled (expired), until the next pass closed them.
 */
export async function claimLines(batchId: string, runner: string, n: number, staleMs: number): Promise<LineRow[]> {
  return db().query<LineRow>(
    `UPDATE batch_lines l SET state = 'running', claimed_by = :runner, claimed_at = now()
      WHERE (l.batch_id, l.idx) IN (
        SELECT batch_id, idx FROM batch_lines
         WHERE batch_id = :batchId AND (state = 'pending' OR (state = 'running' AND claimed_at < now() - (:staleMs || ' milliseconds')::interval))
           AND EXISTS (SELECT 1 FROM batches b WHERE b.id = :batchId AND b.status = 'in_progress' AND b.expires_at > now())
         ORDER BY idx LIMIT :n FOR UPDATE SKIP LOCKED)
      RETURNING l.batch_id, l.idx, l.custom_id, l.body, l.state, l.attempt, l.upstream_waits`,
    { type: QueryTypes.SELECT, replacements: { batchId, runner, n, staleMs: String(staleMs) } },
  );
}

/** Keeps a runner's claims alive. */
export async function refreshClaims(runner: string): Promise<void> {
  await db().query(`UPDATE batch_lines SET claimed_at = now() WHERE claimed_by = :runner AND state = 'running'`, { replacements: { runner } });
}

/** Records a line's outcome once: only the runner that holds the claim can, and only while it is running. */
export async function finishLine(
  l: Pick<LineRow, 'batch_id' | 'idx'>,
  runner: string,
  state: LineState,
  statusCode: number | null,
  requestId: string | null,
  result: unknown,
  usage: UsageRecord[] = [],
  searches: LedgerEntry[] = [],
): Promise<boolean> {
  return db().transaction(async (transaction) => {
    const [rows] = await db().query(
      `UPDATE batch_lines SET state = :state, status_code = :statusCode, request_id = :requestId, result = :result, finished_at = now(), claimed_by = NULL
        WHERE batch_id = :batchId AND idx = :idx AND state = 'running' AND claimed_by = :runner RETURNING idx`,
      { transaction, replacements: { batchId: l.batch_id, idx: l.idx, runner, state, statusCode, requestId, result: JSON.stringify(result) } },
    );
    if ((rows as unknown[]).length !== 1) return false;
    // the line's usage (and request log rows), billed with the answer or not at all (docs/batches.md)
    const write = usage.length ? usageStatement(usage) : undefined;
    if (write) await db().query(write.sql, { transaction, bind: write.params });
    // and its searches' ledger rows (HeldSearchCharge): a search is charged with the answer it served
    for (const e of searches) {
      const search = ledgerStatement(e);
      await db().query(search.sql, { transaction, bind: search.params });
    }
    return true;
  });
}

/**
 * Gives a claimed line back: `same` under the same request id (a refusal before any job: lane full,
 * rate limit, store away), `crash` as the next attempt (worker lost), `upstream` as the next attempt
 * counted as an upstream wait (the provider's 429).
 */
export async function releaseLine(l: Pick<LineRow, 'batch_id' | 'idx'>, runner: string, as: 'same' | 'crash' | 'upstream'): Promise<void> {
  await db().query(
    `UPDATE batch_lines SET state = 'pending', claimed_by = NULL, attempt = attempt + :inc, upstream_waits = upstream_waits + :waits
      WHERE batch_id = :batchId AND idx = :idx AND state = 'running' AND claimed_by = :runner`,
    { replacements: { batchId: l.batch_id, idx: l.idx, runner, inc: as === 'same' ? 0 : 1, waits: as === 'upstream' ? 1 : 0 } },
  );
}

/** The Activity status and code of a line closed without running (docs/observability.md). */
const NOT_RUN_LOG = { canceled: { status: 499, code: 'batch_cancelled' }, expired: { status: 408, code: 'batch_expired' } } as const;

/**
 * Lines not started yet end with `state` (cancelled or expired batch), and so do lines whose runner
 * died (claim older than `staleMs`); lines running elsewhere finish on their own. Each line closed
 * here gets its Activity row in the same statement (one per close, whatever the number of lines): the
 * line's request id, the batch's org, project and key (and the key's member), the line's model and
 * `route`/`dialect` (the synchronous route its lines go to), 499 `batch_cancelled` or 408
 * `batch_expired`, no tokens, cost 0: as the results show the line (`batch_cancelled`/`batch_expired`
 * in the error file, Anthropic's `canceled`/`expired`), the request log shows it once, unbilled.
 */
export async function closePending(batchId: string, state: 'canceled' | 'expired', staleMs: number, line: { route: string; dialect: string }): Promise<number> {
  const [rows] = await db().query(
    `WITH closed AS (
       UPDATE batch_lines SET state = :state, finished_at = now(), claimed_by = NULL, request_id = coalesce(request_id, ${LINE_REQUEST_ID_SQL})
        WHERE batch_id = :batchId AND (state = 'pending' OR (state = 'running' AND claimed_at < now() - (:staleMs || ' milliseconds')::interval))
        RETURNING request_id, body)
     INSERT INTO request_logs (created_at, request_id, org_id, project_id, api_key_id, user_id, route, dialect, model, lane, status, error_code,
                               stream, attempts, input_tokens, output_tokens, units, cost_micros, batch_id)
     SELECT now(), c.request_id, b.org_id, b.project_id, b.api_key_id, k.user_id, :route, :dialect,
            left(CASE WHEN jsonb_typeof(c.body->'model') = 'string' THEN c.body->>'model' ELSE '' END, 255), NULL, :status, :code,
            false, 0, 0, 0, '{}'::jsonb, 0, b.id
       FROM closed c JOIN batches b ON b.id = :batchId LEFT JOIN api_keys k ON k.id = b.api_key_id
     ON CONFLICT (request_id, created_at) DO NOTHING
     RETURNING 1`,
    { replacements: { batchId, state, staleMs: String(staleMs), stem: lineRequestStem(batchId), route: line.route.slice(0, 255), dialect: line.dialect.slice(0, 64), status: NOT_RUN_LOG[state].status, code: NOT_RUN_LOG[state].code } },
  );
  return (rows as unknown[]).length;
}

/**
 * Takes out of Postgres the search reservations left by batch lines that are recorded or closed (of
 * the line `idx` only, when given): searches an attempt reserved whose runner died before it charged
 * them with the answer or gave them back. The caller gives them back in Redis (releaseLeftSearches,
 * shared/search/entitlements.ts). Reservations of lines pending or running are left to their runner.
 */
export async function leftSearches(batchId: string, idx?: number): Promise<HeldSearch[]> {
  const stem = lineRequestStem(batchId);
  return db().query<HeldSearch>(
    `DELETE FROM search_reservations r USING batch_lines l
      WHERE left(r.request_id, length(:stem)) = :stem
        AND l.batch_id = :batchId AND l.state NOT IN ('pending', 'running') AND (:idx = -1 OR l.idx = :idx)
        AND l.idx = substring(r.request_id from :pattern)::int
      RETURNING r.request_id AS "requestId", r.org_id AS "orgId", r.user_id AS "userId", r.period, r.key_source AS "keySource"`,
    { type: QueryTypes.SELECT, replacements: { batchId, stem, idx: idx ?? -1, pattern: `^${stem}([0-9]+)(_[0-9]+)?\\.` } },
  );
}

/** A validated OpenAI batch: its lines, its total and model, `in_progress`, in one transaction (only from `validating`). */
export async function startLines(batchId: string, lines: { custom_id: string; body: unknown }[], model: string | null): Promise<void> {
  await db().transaction(async (t) => {
    const [rows] = await db().query(`UPDATE batches SET status = 'in_progress', in_progress_at = now(), total = :total, model = :model WHERE id = :batchId AND status = 'validating' RETURNING id`, {
      transaction: t,
      replacements: { batchId, total: lines.length, model },
    });
    if ((rows as unknown[]).length === 1) await insertLines(t, batchId, lines);
  });
}

/** Every finished line, in order (finalisation writes the files from these). */
export async function finishedLines(batchId: string): Promise<LineRow[]> {
  return db().query<LineRow>(`SELECT * FROM batch_lines WHERE batch_id = :batchId ORDER BY idx`, { type: QueryTypes.SELECT, replacements: { batchId } });
}
