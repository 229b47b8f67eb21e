import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';
import { ApiError } from '../errors/ApiError';
import { utcInstant } from '../utc-instant';

/**
 * Reading the request log (issue 32): newest first, filtered, in pages with an opaque cursor (the last
 * row's time and request id). The Activity pages, their CSV export and GET /admin/v1/request-logs all
 * read through here, so a page and its export hold the same rows. An org, key or project filter uses
 * that column's (…, created_at DESC, request_id DESC) index in each day partition the time range keeps.
 */
export interface RequestLogFilter {
  orgId?: string;
  apiKeyId?: string;
  projectId?: string;
  model?: string;
  /** An exact status (`429`), a class (`2xx`, `4xx`, `5xx`), or `error` (≥ 400). */
  status?: string;
  from?: Date;
  to?: Date;
}

export interface RequestLogRow {
  request_id: string;
  created_at: string;
  org_id: string;
  project_id: string | null;
  api_key_id: string | null;
  user_id: string | null;
  route: string;
  dialect: string;
  model: string;
  deployment: string | null;
  lane: string | null;
  status: number;
  error_code: string | null;
  stream: boolean;
  attempts: number;
  lane_ms: number | null;
  queue_ms: number | null;
  ttfb_ms: number | null;
  total_ms: number | null;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  units: Record<string, number>;
  cost_micros: number;
  trace_id: string | null;
  /** The batch of a batch line (issue 33); null otherwise. */
  batch_id: string | null;
}

/** The columns, in the order of the API's objects and the CSV export. */
export const LOG_COLUMNS: Array<keyof RequestLogRow> = [
  'created_at', 'request_id', 'org_id', 'project_id', 'api_key_id', 'user_id', 'route', 'dialect', 'model', 'deployment', 'lane',
  'status', 'error_code', 'stream', 'attempts', 'lane_ms', 'queue_ms', 'ttfb_ms', 'total_ms', 'input_tokens', 'output_tokens',
  'cached_tokens', 'reasoning_tokens', 'units', 'cost_micros', 'trace_id', 'batch_id',
];

export const STATUS_FILTER = /^([1-5]\d\d|[1-5]xx|error)$/;

const cursorOf = (r: { created_at: string; request_id: string }) => Buffer.from(`${r.created_at}|${r.request_id}`).toString('base64url');

/** A cursor's time, exactly as cursorOf writes it (the page query's to_char, microseconds, UTC). */
const CURSOR_AT = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.\d{6}Z$/;

/** The cursor's row key; anything cursorOf did not write is 400 invalid_cursor (never a database error). */
function readCursor(cursor: string): { at: string; id: string } {
  const [at, id, extra] = Buffer.from(cursor, 'base64url').toString().split('|');
  const m = CURSOR_AT.exec(at ?? '');
  // a real instant: 2026-02-31 or 25:00 would be taken by Date and rolled over, by Postgres refused
  const real = !!m && utcInstant(m[1]) !== undefined;
  if (!real || !id || extra !== undefined) throw new ApiError(400, 'invalid_cursor', 'The cursor is not one this API returned.', { param: 'cursor' });
  return { at, id };
}

/** One page, newest first; `next` is the cursor of the following page, null on the last. */
export async function listRequestLogs(f: RequestLogFilter, opts: { limit: number; cursor?: string }): Promise<{ rows: RequestLogRow[]; next: string | null }> {
  const where: string[] = [];
  const rep: Record<string, unknown> = { limit: opts.limit + 1 };
  const eq = (col: string, v: unknown) => {
    if (v === undefined) return;
    where.push(`${col} = :${col}`);
    rep[col] = v;
  };
  eq('org_id', f.orgId);
  eq('api_key_id', f.apiKeyId);
  eq('project_id', f.projectId);
  eq('model', f.model);
  if (f.status) {
    if (f.status === 'error') where.push('status >= 400');
    else if (f.status.endsWith('xx')) {
      where.push('status >= :lo AND status < :hi');
      rep.lo = Number(f.status[0]) * 100;
      rep.hi = rep.lo as number + 100;
    } else eq('status', Number(f.status));
  }
  if (f.from) {
    where.push('created_at >= :from');
    rep.from = f.from.toISOString();
  }
  if (f.to) {
    where.push('created_at < :to');
    rep.to = f.to.toISOString();
  }
  if (opts.cursor) {
    const c = readCursor(opts.cursor);
    // the plain bound lets each partition's (…, created_at DESC) index start at the cursor instead of the newest row
    where.push('created_at <= :c_at::timestamptz AND (created_at, request_id) < (:c_at::timestamptz, :c_id)');
    rep.c_at = c.at;
    rep.c_id = c.id;
  }
  const rows = await db().query<RequestLogRow & { at_key: string }>(
    `SELECT ${LOG_COLUMNS.filter((c) => c !== 'created_at').join(', ')},
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
       FROM request_logs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY request_logs.created_at DESC, request_id DESC LIMIT :limit`, // the column (its index order), not the to_char alias
    { type: QueryTypes.SELECT, replacements: rep },
  );
  const more = rows.length > opts.limit;
  const page = rows.slice(0, opts.limit).map((r) => ({ ...r, cost_micros: Number(r.cost_micros) }));
  return { rows: page, next: more ? cursorOf(page[page.length - 1]) : null };
}

/** One row by request id, within an org when given. */
export async function findRequestLog(requestId: string, orgId?: string): Promise<RequestLogRow | undefined> {
  const rows = await db().query<RequestLogRow>(
    `SELECT ${LOG_COLUMNS.filter((c) => c !== 'created_at').join(', ')},
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
       FROM request_logs WHERE request_id = :id ${orgId ? 'AND org_id = :org' : ''} ORDER BY request_logs.created_at DESC LIMIT 1`,
    { type: QueryTypes.SELECT, replacements: { id: requestId, org: orgId } },
  );
  return rows[0] && { ...rows[0], cost_micros: Number(rows[0].cost_micros) };
}

const csvCell = (v: unknown): string => {
  const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  // quoted when needed; a leading formula character is neutralised (CSV injection), except in a
  // cell that is a number and nothing else (a negative number stays a number)
  const safe = /^[=+\-@\t\r]/.test(s) && !/^-?\d+(\.\d+)?$/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/** The rows as CSV (RFC 4180, a header line, CRLF line ends). */
export function requestLogCsv(rows: RequestLogRow[]): string {
  return [LOG_COLUMNS.join(','), ...rows.map((r) => LOG_COLUMNS.map((c) => csvCell(r[c])).join(','))].join('\r\n') + '\r\n';
}
