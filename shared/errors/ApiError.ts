/**
 * The one error type route handlers throw. The error handler turns it into the envelope
 * `{ error: { code, message } }` with its status and headers.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  /** Extra fields placed inside `error` (for example `credits_bound`). */
  readonly details?: Record<string, unknown>;
  /** The request field at fault, if one is (OpenAI's `error.param` on the OpenAI dialects). */
  readonly param?: string;
  /**
   * A failure not to be told for this many ms more (never answered): a worker's fetch that got no
   * answer reports at once and the pod waits out the fetch's deadline (api/dispatch/search.ts), so
   * the wait holds no worker slot or lane.
   */
  readonly holdMs?: number;

  constructor(
    status: number,
    code: string,
    message: string,
    opts: { retryAfter?: number; headers?: Record<string, string>; details?: Record<string, unknown>; param?: string; holdMs?: number } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.headers = { ...(opts.headers ?? {}) };
    if (opts.retryAfter !== undefined) this.headers['Retry-After'] = String(Math.max(1, Math.ceil(opts.retryAfter)));
    this.details = opts.details;
    this.param = opts.param;
    if (opts.holdMs !== undefined) this.holdMs = opts.holdMs;
  }

  toJSON(): { code: string; message: string } & Record<string, unknown> {
    return { code: this.code, message: this.message, ...(this.details ?? {}) };
  }
}

/** A serialisable form that crosses the queue from worker to pod. */
export interface WireError {
  status: number;
  code: string;
  message: string;
  retryAfter?: number;
  details?: Record<string, unknown>;
  /** Headers other than Retry-After (e.g. a model pool's x-service-deployment). */
  headers?: Record<string, string>;
  /** The request field at fault, when a worker refused one (e.g. `unsupported_parameter`). */
  param?: string;
  /** Not to be told for this many ms more (ApiError.holdMs; never answered). */
  holdMs?: number;
  /** A worker's failure: how long the job waited in the queue (the request log's `queue_ms`; never answered). */
  queueMs?: number;
}

export function toWire(err: ApiError): WireError {
  const { 'Retry-After': retry, ...headers } = err.headers;
  return {
    status: err.status,
    code: err.code,
    message: err.message,
    retryAfter: retry ? Number(retry) : undefined,
    details: err.details,
    ...(Object.keys(headers).length ? { headers } : {}),
    param: err.param,
    ...(err.holdMs !== undefined ? { holdMs: err.holdMs } : {}),
  };
}

export function fromWire(w: WireError): ApiError {
  return new ApiError(w.status, w.code, w.message, { retryAfter: w.retryAfter, details: w.details, headers: w.headers, param: w.param, holdMs: w.holdMs });
}
