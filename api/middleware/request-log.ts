import type { Request, Response, NextFunction, RequestHandler } from 'express';
import type { AppContext } from '../context';
import { appendRequestLog } from '../../shared/metering/usage-outbox';
import type { LogContext, RequestLogEntry } from '../../shared/metering/request-log';
import type { CanonicalUsage } from '../dialects/canonical';
import { keys } from '../../shared/redis/keys';
import { logger } from '../../shared/logger';
import { merged } from '../../shared/merged';

/**
 * The pod's half of the request log (shared/metering/request-log.ts). A request whose job delivered a
 * result has its row in its usage record, written by the worker; this middleware adds the row of an
 * authenticated request that ended otherwise: refused before the queue (4xx, 402, 429, a 401 with a
 * known key), failed (5xx, also after a stream began), cancelled (the client left), or answered without
 * a job (model listings, count_tokens, stored-response reads and deletes, GET of batches and files:
 * status as answered, no tokens, no cost): one XADD to the usage outbox when the response closes,
 * not awaited, off the request path.
 */

/** What a request's handlers tell this middleware, in `res.locals.requestLog`. */
export interface RequestLogState {
  receivedAt: number;
  /** A job delivered the result: its row travels with its usage. */
  carried?: boolean;
  /** The error the one error handler answered (api/middleware/error-handler.ts). */
  failure?: { status: number; code: string };
  model?: string;
  lane?: string;
  admittedAt?: number;
  /** The job's time in the queue, when its worker failed it (a successful job's row is the worker's). */
  queueMs?: number;
  stream?: boolean;
  /** The usage of a request whose jobs have no rows of their own (RunJobOptions.partOfRequest), added up by `addToRow`. */
  totals?: { inputTokens: number; outputTokens: number; cachedTokens: number; units: Record<string, number> };
  /** A batch line held back (shared/batches/pacing.ts heldBack): it runs again and its one row is its outcome's (api/ticket-app.ts). */
  held?: boolean;
  /** A known key that was refused (401): who the row belongs to (api/middleware/authenticate.ts). */
  refusedKey?: { orgId: string; keyId: string; projectId: string | null; userId: string | null };
}

export const logState = (res: Response): RequestLogState | undefined => res.locals.requestLog as RequestLogState | undefined;

/** The route without a path key, project or routing plan: `/a/{key}/p/{project}/v1/x` → `/v1/x`. */
export function routeOf(req: Request): string {
  return (req.originalUrl.split('?')[0].replace(/^\/+a\/+[^/]+(\/+p\/+[^/]+)?/i, '').replace(/^\/+r\/+[^/]+/i, '') || '/').slice(0, 255);
}

/** The API dialect a route speaks. */
export function dialectOf(route: string): string {
  if (route.startsWith('/v1/messages')) return 'anthropic';
  if (route.startsWith('/v1/responses')) return 'openai-responses';
  if (route.startsWith('/v1/chat/') || route.startsWith('/v1/completions')) return 'openai-chat';
  if (/^\/v[12]\/(rerank|embed$|chat$)/.test(route)) return 'cohere';
  if (route.startsWith('/mcp')) return 'mcp';
  if (route.startsWith('/v1/systemone')) return 'systemone';
  if (route.startsWith('/v1/alpha/search')) return 'search';
  return 'openai';
}

/** The log context a job carries from this request (its envelope's `log`). */
export function logContext(req: Request): LogContext {
  const route = routeOf(req);
  const state = req.res ? logState(req.res) : undefined;
  return { receivedAt: state?.receivedAt ?? Date.now(), route, dialect: dialectOf(route), userId: req.auth?.userId ?? null,
    traceId: req.trace?.root.traceId() ?? null, batchId: req.batchLine?.batchId ?? null };
}

/**
 * How a request ended when it did not succeed, as its row and its server span say: the error the one
 * error handler answered (also in-band, after a stream began: the wire status was 200), or 499
 * `client_closed_request` when the client left before the response finished; undefined otherwise.
 */
export function failureOf(res: Response, state: RequestLogState | undefined = logState(res)): { status: number; code: string } | undefined {
  if (state?.failure) return state.failure;
  return res.writableFinished ? undefined : { status: 499, code: 'client_closed_request' };
}

/** Adds a part's usage (a native search turn's tokens, a search) to the request's row. */
export function addToRow(res: Response, part: { inputTokens?: number; outputTokens?: number; cachedTokens?: number; units?: Record<string, number> }): void {
  const state = logState(res);
  if (!state) return;
  const t = (state.totals ??= { inputTokens: 0, outputTokens: 0, cachedTokens: 0, units: {} });
  t.inputTokens += part.inputTokens ?? 0;
  t.outputTokens += part.outputTokens ?? 0;
  t.cachedTokens += part.cachedTokens ?? 0;
  for (const [k, v] of Object.entries(part.units ?? {})) t.units[k] = (t.units[k] ?? 0) + v;
}

/** A job's canonical usage (its tokens) added to the request's row: addToRow. */
export function addUsageToRow(res: Response, u: CanonicalUsage | null | undefined): void {
  addToRow(res, { inputTokens: u?.prompt_tokens, outputTokens: u?.completion_tokens, cachedTokens: u?.prompt_tokens_details?.cached_tokens });
}

const headerNumber = (res: Response, name: string) => {
  const v = Number(res.getHeader(name));
  return Number.isFinite(v) && v > 0 ? v : undefined;
};

/**
 * The log-only row of a request no job's usage record carries (refused, failed, cancelled, or one that
 * ran no job: GET /v1/models, count_tokens, stored-response reads, GET of batches and files), or
 * undefined when its row travels with its usage or it has no known caller.
 */
function entryOf(req: Request, res: Response, state: RequestLogState, firstByteAt: number | undefined): RequestLogEntry | undefined {
  // a failure after a delivered job has the job's key: the two rows merge, the failure's status wins
  // (requestLogInsertSql); a delivered job's row alone is its usage record's
  if ((state.carried && !state.failure) || state.held) return undefined;
  const who = req.auth
    ? { orgId: req.auth.orgId, keyId: req.auth.keyId, projectId: req.auth.projectId, userId: req.auth.userId }
    : state.refusedKey;
  if (!who) return undefined;
  const failure = failureOf(res, state);
  const now = Date.now();
  const ctx = logContext(req);
  const body = req.body as { model?: unknown } | undefined;
  // a multipart upload's fields are never stored unless the gateway resolved them (audio privacy: a
  // refused transcription's `model` part can be anything the caller typed, a file name included)
  const model = state.model ?? (typeof body?.model === 'string' && !req.is('multipart/form-data') ? body.model : '');
  const named = res.getHeader('x-service-deployment');
  const fallback = res.getHeader('x-service-fallback-model');
  // named as on the usage event: `<fallback model>/<deployment>` when a fallback served (or last failed)
  const deployment = typeof named === 'string' && typeof fallback === 'string' ? `${fallback}/${named}` : named;
  return merged(ctx, {
    userId: who.userId,
    requestId: req.id,
    orgId: who.orgId,
    projectId: who.projectId,
    apiKeyId: who.keyId,
    model: model.slice(0, 255),
    lane: state.lane ?? null,
    status: failure?.status ?? res.statusCode,
    errorCode: failure?.code ?? null,
    stream: !!state.stream,
    attempts: headerNumber(res, 'x-service-attempts') ?? 0,
    deployment: typeof deployment === 'string' ? deployment : null,
    laneMs: state.admittedAt === undefined ? null : state.admittedAt - state.receivedAt,
    queueMs: state.queueMs ?? null,
    ttfbMs: firstByteAt === undefined ? null : firstByteAt - state.receivedAt,
    totalMs: now - state.receivedAt,
    ...(state.totals
      ? { inputTokens: state.totals.inputTokens, outputTokens: state.totals.outputTokens, cachedTokens: state.totals.cachedTokens, units: state.totals.units }
      : {}),
  });
}

/** Adds a log-only row to the pod's usage outbox, not awaited (the usage drainer writes it). */
function writeRow(ctx: AppContext, entry: RequestLogEntry): void {
  appendRequestLog(ctx.redis, entry, keys.usageOutboxFor(ctx.replies.channel)).catch((err) => logger.warn({ err, requestId: entry.requestId }, 'request log entry not written'));
}

/** Whose a log-only row is, and what it asked for. */
export type RowOwner = Pick<RequestLogEntry, 'requestId' | 'orgId' | 'projectId' | 'apiKeyId' | 'model'>;

/**
 * The row of a request that failed with no job of its own to carry it, and nothing billed (no tokens):
 * `base` is its context (its arrival, route, user), `who` its identity.
 */
export function logFailure(ctx: AppContext, base: LogContext, who: RowOwner, failure: { status: number; code: string }): void {
  const done = { model: who.model.slice(0, 255), lane: null, status: failure.status, errorCode: failure.code, totalMs: Date.now() - base.receivedAt };
  writeRow(ctx, Object.assign({}, base, who, done));
}

/**
 * The row of one job-sized call that failed inside a request that itself succeeds (an MCP tool call
 * answers its error in the JSON-RPC result): `requestId` is the call's job id.
 */
export function logFailedCall(ctx: AppContext, req: Request, requestId: string, model: string, failure: { status: number; code: string }): void {
  const a = req.auth;
  if (a) logFailure(ctx, logContext(req), { requestId, orgId: a.orgId, projectId: a.projectId, apiKeyId: a.keyId, model }, failure);
}

/**
 * The row of a request that succeeded, written now (a background response whose jobs have no rows of
 * their own, RunJobOptions.partOfRequest: its pod wrote none when its response closed), with the
 * totals its parts added (`addToRow`).
 */
export function logSucceededRun(ctx: AppContext, req: Request, res: Response): void {
  const state = logState(res);
  const entry = state ? entryOf(req, res, merged(state, { carried: false, failure: undefined }), undefined) : undefined;
  if (entry) writeRow(ctx, merged(entry, { status: 200, errorCode: null }));
}

/** Mounted first on the inference app: notes the arrival, and writes the row of a request that needs one when it closes. */
export function requestLogger(ctx: AppContext): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const state: RequestLogState = { receivedAt: Date.now() };
    res.locals.requestLog = state;
    let firstByteAt: number | undefined;
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: unknown[]) {
      firstByteAt ??= Date.now();
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as typeof res.writeHead;
    res.once('close', () => {
      const entry = entryOf(req, res, state, firstByteAt);
      if (entry) writeRow(ctx, entry);
    });
    next();
  };
}
