import type { UsageRecord } from './usage';

/**
 * The request log (issue 32): one row per request in `request_logs`, metadata only. It travels in the
 * usage outbox: a request that is billed carries its log inside its usage record (`UsageRecord.log`,
 * put there by the worker right before the result publish: one entry, one write), and a request that
 * ends without a usage event (refused at the edge, failed, cancelled) adds a log-only entry from its
 * pod (field `l`, api/middleware/request-log.ts). The usage drainer writes both kinds in batches.
 */

/** What the pod knows of a request when it enqueues it; travels in the job envelope as `log`. */
export interface LogContext {
  /** When the pod received the request (epoch ms): the row's time. */
  receivedAt: number;
  /** When the lane admitted it (epoch ms), just before the job was added. */
  admittedAt?: number;
  /** The route, without a path key (`/v1/chat/completions`, `/mcp tools/call web_search`). */
  route: string;
  dialect: string;
  userId: string | null;
  /** The trace the request belongs to (set by tracing when it is on; null otherwise). */
  traceId?: string | null;
  /** The batch a batch line belongs to (api/ticket-app.ts); null for every other request. */
  batchId?: string | null;
}

/** The log fields of one request beyond its identity and usage. */
export interface RequestLogFields extends LogContext {
  status: number;
  errorCode?: string | null;
  stream?: boolean;
  attempts?: number;
  deployment?: string | null;
  laneMs?: number | null;
  queueMs?: number | null;
  ttfbMs?: number | null;
  totalMs?: number | null;
  cachedTokens?: number | null;
  reasoningTokens?: number | null;
}

/** A log-only outbox entry (`l`): a request without a usage event of its own. */
export interface RequestLogEntry extends RequestLogFields {
  requestId: string;
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  model: string;
  lane: string | null;
  /**
   * The totals of a request that ran several jobs whose usage events bill it (the native search
   * loop: every model turn and search): the row shows them, the events stay the billing.
   */
  inputTokens?: number;
  outputTokens?: number;
  units?: Record<string, number>;
}

const str = (v: unknown) => typeof v === 'string';
const optStr = (v: unknown) => v === undefined || v === null || typeof v === 'string';
const optNum = (v: unknown) => v === undefined || v === null || (typeof v === 'number' && Number.isFinite(v));

/** Whether `v` holds the log fields (checked before the drainer trusts them). */
export function isLogFields(v: unknown): v is RequestLogFields {
  const l = v as Partial<RequestLogFields> | null;
  return !!l && typeof l === 'object' && typeof l.receivedAt === 'number' && Number.isFinite(l.receivedAt) &&
    str(l.route) && str(l.dialect) && optStr(l.userId) && typeof l.status === 'number' && optStr(l.errorCode) &&
    optStr(l.deployment) && optStr(l.traceId) && optStr(l.batchId) &&
    [l.attempts, l.laneMs, l.queueMs, l.ttfbMs, l.totalMs, l.cachedTokens, l.reasoningTokens, l.admittedAt].every(optNum);
}

/** The log-only entry of an outbox entry's `l` field, or undefined when it is not one. */
export function decodeLogEntry(raw: string | undefined): RequestLogEntry | undefined {
  let l: Partial<RequestLogEntry>;
  try {
    l = JSON.parse(raw ?? '');
  } catch {
    return undefined;
  }
  if (!isLogFields(l)) return undefined;
  const e = l as Partial<RequestLogEntry>;
  const units = e.units === undefined || (!!e.units && typeof e.units === 'object' && Object.values(e.units).every((v) => typeof v === 'number' && Number.isFinite(v)));
  const ok = str(e.requestId) && e.requestId!.length > 0 && str(e.orgId) && str(e.model) &&
    optStr(e.projectId) && optStr(e.apiKeyId) && optStr(e.lane) && optNum(e.inputTokens) && optNum(e.outputTokens) && units;
  return ok ? (e as RequestLogEntry) : undefined;
}

/** One row to write: a log-only entry, or a usage record with its log. */
export type LogSource = { entry: RequestLogEntry } | { usage: UsageRecord & { log: RequestLogFields } };

const ms = (v: number | null | undefined) => (v === undefined || v === null ? null : Math.max(0, Math.round(v)));

function rowOf(s: LogSource) {
  const log = 'entry' in s ? s.entry : s.usage.log;
  const who = 'entry' in s ? s.entry : s.usage;
  const u = 'usage' in s ? s.usage : undefined;
  return {
    created_at: new Date(log.receivedAt).toISOString(),
    request_id: who.requestId,
    org_id: who.orgId,
    project_id: who.projectId,
    api_key_id: who.apiKeyId,
    user_id: log.userId,
    route: log.route.slice(0, 255),
    dialect: log.dialect.slice(0, 64),
    model: who.model.slice(0, 255),
    deployment: log.deployment ?? u?.deployment ?? null,
    lane: who.lane,
    status: log.status,
    error_code: log.errorCode ?? null,
    stream: !!log.stream,
    attempts: log.attempts ?? 0,
    lane_ms: ms(log.laneMs),
    queue_ms: ms(log.queueMs),
    ttfb_ms: ms(log.ttfbMs),
    total_ms: ms(log.totalMs),
    input_tokens: u?.inputTokens ?? ('entry' in s ? s.entry.inputTokens : undefined) ?? 0,
    output_tokens: u?.outputTokens ?? ('entry' in s ? s.entry.outputTokens : undefined) ?? 0,
    cached_tokens: log.cachedTokens ?? null,
    reasoning_tokens: log.reasoningTokens ?? null,
    units: u?.units ?? ('entry' in s ? s.entry.units : undefined) ?? {},
    passthrough: u?.passthrough ?? false,
    trace_id: log.traceId ?? null,
    batch_id: log.batchId ?? null,
  };
}

type Row = ReturnType<typeof rowOf>;
const failed = (r: Row) => r.status >= 400;
const max = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/**
 * Two rows of one request (same key): a delivered job's row (its usage record's, 200) and the pod's
 * failure after it (a /v1/responses answer not stored, …). The client was answered the failure, so
 * the row says it, with the delivered job's tokens, cost and timings. The same rule as the INSERT's
 * ON CONFLICT (requestLogInsertSql), applied within one batch (a statement may touch a row once).
 */
function merged(a: Row, b: Row): Row {
  if (failed(a) === failed(b)) return a; // the same entry again
  const [f, ok] = failed(a) ? [a, b] : [b, a];
  return { ...ok, status: f.status, error_code: f.error_code, total_ms: max(f.total_ms, ok.total_ms) };
}

/** The request log rows of `rows` as the `$n::jsonb` parameter of requestLogInsertSql (one per key). */
export function requestLogRows(rows: LogSource[]): string {
  const byKey = new Map<string, Row>();
  for (const r of rows.map(rowOf)) {
    const k = `${r.request_id} ${r.created_at}`;
    const had = byKey.get(k);
    byKey.set(k, had ? merged(had, r) : r);
  }
  return JSON.stringify([...byKey.values()]);
}

/**
 * The INSERT of request log rows from parameter `param` (requestLogRows), idempotent: (request_id,
 * created_at) is the key and created_at is the request's arrival, fixed in the entry. The same row
 * again is a no-op; a failure and a success under one key (a request whose job delivered, then
 * failed: see `merged`) make one row with the failure's status and code and the success's usage,
 * whichever lands first. The cost is the
 * ledger's arithmetic (shared/limits/ledger-spend.ts): tokens and audio seconds at the model's prices,
 * plus `cost_micros`; a passthrough request costs the platform nothing.
 */
export function requestLogInsertSql(param: string): string {
  return `INSERT INTO request_logs (created_at, request_id, org_id, project_id, api_key_id, user_id, route, dialect, model, deployment, lane, status,
                               error_code, stream, attempts, lane_ms, queue_ms, ttfb_ms, total_ms, input_tokens, output_tokens,
                               cached_tokens, reasoning_tokens, units, cost_micros, trace_id, batch_id)
     SELECT r.created_at, r.request_id, r.org_id, r.project_id, r.api_key_id, r.user_id, r.route, r.dialect, r.model, r.deployment, r.lane, r.status,
            r.error_code, r.stream, r.attempts, r.lane_ms, r.queue_ms, r.ttfb_ms, r.total_ms, r.input_tokens, r.output_tokens,
            r.cached_tokens, r.reasoning_tokens, r.units,
            CASE WHEN r.passthrough THEN 0 ELSE
              r.input_tokens * coalesce((m.prices->>'input_token')::numeric, 0)
              + r.output_tokens * coalesce((m.prices->>'output_token')::numeric, 0)
              + coalesce((r.units->>'audio_duration_ms')::numeric, 0) / 1000 * coalesce((m.prices->>'audio_second')::numeric, 0)
              + coalesce((r.units->>'cost_micros')::numeric, 0) END,
            r.trace_id, r.batch_id
       FROM jsonb_to_recordset(${param}::jsonb) AS r(created_at timestamptz, request_id text, org_id uuid, project_id uuid, api_key_id uuid, user_id uuid,
              route text, dialect text, model text, deployment text, lane text, status smallint, error_code text, stream boolean, attempts smallint,
              lane_ms integer, queue_ms integer, ttfb_ms integer, total_ms integer, input_tokens integer, output_tokens integer,
              cached_tokens integer, reasoning_tokens integer, units jsonb, passthrough boolean, trace_id text, batch_id text)
       LEFT JOIN models m ON m.public_id = regexp_replace(r.model, '-background$', '')
     ON CONFLICT (request_id, created_at) DO UPDATE SET
       status = CASE WHEN excluded.status >= 400 THEN excluded.status ELSE request_logs.status END,
       error_code = CASE WHEN excluded.status >= 400 THEN excluded.error_code ELSE request_logs.error_code END,
       deployment = coalesce(request_logs.deployment, excluded.deployment),
       attempts = greatest(request_logs.attempts, excluded.attempts),
       lane_ms = coalesce(request_logs.lane_ms, excluded.lane_ms),
       queue_ms = coalesce(request_logs.queue_ms, excluded.queue_ms),
       ttfb_ms = coalesce(request_logs.ttfb_ms, excluded.ttfb_ms),
       total_ms = greatest(request_logs.total_ms, excluded.total_ms),
       input_tokens = greatest(request_logs.input_tokens, excluded.input_tokens),
       output_tokens = greatest(request_logs.output_tokens, excluded.output_tokens),
       cached_tokens = coalesce(request_logs.cached_tokens, excluded.cached_tokens),
       reasoning_tokens = coalesce(request_logs.reasoning_tokens, excluded.reasoning_tokens),
       units = CASE WHEN excluded.status >= 400 THEN request_logs.units ELSE excluded.units END,
       cost_micros = greatest(request_logs.cost_micros, excluded.cost_micros)
     WHERE (request_logs.status >= 400) <> (excluded.status >= 400)`;
}
