import { Agent, type Dispatcher, type FormData } from 'undici';
import { sleep, type CancelSignal } from '../../shared/cancel-source';
import { ApiError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';
import { logger } from '../../shared/logger';
import { socketErrorCode } from '../../shared/net/error-code';
import { config } from '../../shared/config/env';
import { contextTooLong, contextWindowExceeded } from '../../shared/errors/context-window';

export interface FetchPolicy {
  /** The job's signal: aborted on client cancel and at the job's deadline (with that reason). */
  signal: CancelSignal;
  deadline: number;
  /** Retries of safe failures (connect errors, 429, 502, 503 before any byte). Default 2. */
  retries?: number;
  /** The request carries the caller's own upstream key (passthrough), not a platform credential. */
  callerKey?: boolean;
  /**
   * No response headers within this of the request being sent: the call fails retryably as
   * `upstream_unavailable` (model pools). Connecting is bounded apart, by undici's connect timeout (10 s).
   */
  firstByteTimeoutMs?: number;
  /** Reads what the provider's error body says beyond its message (Google's details: gemini/errors.ts). */
  errorHints?: ErrorHintReader;
  /**
   * The call sends a conversation to a chat model (chat, legacy completions, messages, generateContent):
   * a refusal of its length is OpenAI's 400 `context_length_exceeded` naming `messages`
   * (context-window.ts). Any other call (embeddings, images, transcription, rerank) keeps the
   * upstream's refusal: an images upstream's "prompt is too long" is no context window.
   */
  conversation?: boolean;
}

/** What a provider's error body says that its status and Retry-After header do not. */
export interface ErrorHints {
  /** The wait the upstream asks for in its body (Google's RetryInfo); a Retry-After header wins. */
  retryAfterMs?: number;
  /** The upstream refused the key, whatever the status (Gemini answers an invalid key with 400). */
  keyRefused?: boolean;
  /**
   * The request is fine but the upstream is not set up to serve it (a deployment that does not
   * exist, a billing or region precondition): the operator's to fix, not the caller's.
   */
  misconfigured?: boolean;
  /**
   * The upstream's content filter refused the request (Azure's 400 `content_filter`): a policy block,
   * not a malformed request. `detail` is what the upstream says of it, passed on to the caller.
   */
  contentFilter?: { detail?: Record<string, unknown> };
}

export type ErrorHintReader = (status: number, body: unknown) => ErrorHints;

/** How an upstream call failed, for routing: the upstream status (0: no answer) and its Retry-After. */
export interface FailureInfo {
  status: number;
  retryAfterMs?: number;
}

const failures = new WeakMap<object, FailureInfo>();

/** The upstream side of an error thrown by fetchUpstream (undefined for any other error). */
export function failureInfo(err: unknown): FailureInfo | undefined {
  return typeof err === 'object' && err !== null ? failures.get(err) : undefined;
}

/** Records how an upstream call failed on its error, for the pool's router (`failureInfo`). */
export function noted<E extends object>(err: E, info: FailureInfo): E {
  failures.set(err, info);
  return err;
}

/**
 * 503 `upstream_unavailable` for an upstream that sent no response headers within the model pool's
 * first-byte limit: a retryable failure (status 0, metric class `timeout`) for every kind of upstream.
 */
export function noAnswerWithin(ms: number | undefined): ApiError {
  return noted(errors.upstreamUnavailable(`The upstream did not answer within ${ms} ms.`), { status: 0 });
}

export interface UpstreamInit {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** JSON text, or a multipart form (undici's own FormData class: the global one is not recognised). */
  body?: string | FormData;
}

// 529: Anthropic's overloaded_error (its API's own status for a busy service)
const RETRYABLE_STATUS = new Set([429, 502, 503, 529]);
const MAX_BACKOFF_MS = 5_000;

/**
 * One keep-alive connection pool per upstream origin for the whole worker process. undici's
 * `request` is used rather than `fetch`: it skips the WHATWG Request/Response/stream layers, which
 * cost about a millisecond of CPU per call at gateway rates (docs/benchmark.md). undici's own header
 * and body timeouts (300 s by default, shorter than REQUEST_TIMEOUT_MS) are off: the job's deadline,
 * carried by its signal, is the one limit, so a long non-streamed completion is not cut at 300 s.
 * No answer is read past UPSTREAM_MAX_RESPONSE_BYTES (undici's `maxResponseSize`, counted as the body
 * arrives, streamed or not: a read past it fails): a 200 of hundreds of MB used to be held whole by
 * the worker (GBs of heap) and end as `worker_lost`. Made on the first call, once the config is read.
 */
let agent: Agent | undefined;
function upstreamAgent(): Agent {
  return (agent ??= new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: null, headersTimeout: 0, bodyTimeout: 0, maxResponseSize: config().upstreamMaxResponseBytes }));
}

/** 502 `upstream_error` for an answer larger than UPSTREAM_MAX_RESPONSE_BYTES (by its Content-Length, before any of it is read). */
function tooLarge(res: UpstreamResponse): Error | undefined {
  const length = res.header('content-length');
  const max = config().upstreamMaxResponseBytes;
  if (length === null || !(Number(length) > max)) return undefined;
  void res.discard();
  return noted(errors.upstreamError(`The upstream answer (${length} bytes) is larger than the ${max} bytes a worker reads.`), { status: res.status });
}

/** A path a request line can carry as it is (no character URL parsing would encode or resolve). */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;
const PLAIN_ORIGIN = /^https?:\/\/[A-Za-z0-9.\-]+(:\d+)?$/;

/**
 * `url` as the origin and path undici's dispatcher takes. The agent is called directly rather than
 * through undici's `request(url, opts)`, which parses the URL and copies the options with a spread
 * followed by keys: a hidden class of its own per call in V8 (shared/merged.ts). The gateway's
 * upstream URLs are its providers' base URLs and its own paths; any URL that is not plain (user
 * info, characters to encode, dot segments) goes through the URL parser, as undici would.
 */
export function originAndPath(url: string): { origin: string; path: string } {
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  if (slash > 0) {
    const origin = url.slice(0, slash);
    const path = url.slice(slash);
    const defaultPort = /^https:.*:443$|^http:.*:80$/.test(origin);
    if (PLAIN_ORIGIN.test(origin) && !defaultPort && PLAIN_PATH.test(path) && !/\/\.\.?(\/|\?|$)/.test(path)) return { origin: origin.toLowerCase(), path };
  }
  const u = new URL(url);
  return { origin: u.origin, path: `${u.pathname}${u.search}` };
}

/** The part of an upstream answer adapters read; the body can be read once. */
export class UpstreamResponse {
  constructor(private readonly raw: Dispatcher.ResponseData) {}

  get status(): number {
    return this.raw.statusCode;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  header(name: string): string | null {
    const v = this.raw.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] ?? null : v ?? null;
  }

  /** The body's chunks as they arrive (streams). */
  get body(): AsyncIterable<Uint8Array> {
    return this.raw.body;
  }

  json(): Promise<unknown> {
    return this.raw.body.json();
  }

  text(): Promise<string> {
    return this.raw.body.text();
  }

  async bytes(): Promise<Buffer> {
    return Buffer.from(await this.raw.body.arrayBuffer());
  }

  /** Drops an unread body so the connection goes back to the pool. */
  async discard(): Promise<void> {
    await this.raw.body.dump().catch(() => undefined);
  }
}

/** Seconds or an HTTP date, as upstreams send it. */
export function parseRetryAfter(h: string | null): number | undefined {
  if (!h) return undefined;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const d = Date.parse(h);
  return Number.isFinite(d) ? Math.max(0, d - Date.now()) : undefined;
}

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

function isConnectError(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return CONNECT_ERRORS.has(e?.code ?? '') || CONNECT_ERRORS.has(e?.cause?.code ?? '');
}

/**
 * 503 `upstream_unavailable` for a connection that failed: the error's code only (ECONNREFUSED,
 * ENOTFOUND...). The socket's own message names the upstream's address, which may be an internal one
 * (a self-hosted model server): it goes to the log, never to the caller.
 */
export function unreachable(err: unknown): ApiError {
  const e = err as { message?: string; cause?: { message?: string } } | undefined;
  const code = socketErrorCode(err);
  logger.warn({ err: e?.cause?.message ?? e?.message }, 'upstream unreachable');
  return errors.upstreamUnavailable(`Could not reach the upstream${code ? ` (${code})` : ''}.`);
}

/** An upstream's error answer, read once: its message, the wait it asks for, and its provider's hints. */
export interface ErrorAnswer {
  status: number;
  message: string;
  retryAfterMs?: number;
  hints: ErrorHints;
  /** The request field the upstream names at fault (OpenAI's `error.param`): a field name, never a value. */
  param?: string;
  /** The upstream's error code (OpenAI's `error.code`, else its `error.type`), for refusals read by kind (context-window.ts). */
  code?: string;
}

async function readErrorAnswer(res: UpstreamResponse, reader?: ErrorHintReader): Promise<ErrorAnswer> {
  const text = await res.text().catch(() => '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  const j = (json ?? {}) as { error?: { message?: string; param?: unknown; code?: unknown; type?: unknown } | string; message?: string };
  const m = typeof j.error === 'string' ? j.error : j.error?.message ?? j.message;
  // A 5xx body without an API error message (an HTML error page, a proxy's page, a stack trace) is the
  // upstream's internals, not an answer to the caller: logged, never quoted.
  const unquoted = !(typeof m === 'string' && m) && res.status >= 500 && text.length > 0;
  if (unquoted) logger.warn({ status: res.status, body: text.slice(0, 200) }, 'upstream error body without a message');
  const message = typeof m === 'string' && m ? m.slice(0, 500) : (!unquoted && text.slice(0, 200)) || `status ${res.status}`;
  const hints = json !== undefined && reader ? reader(res.status, json) : {};
  const param = typeof j.error === 'object' && typeof j.error?.param === 'string' ? j.error.param.slice(0, 64) : undefined;
  const kind = typeof j.error === 'object' ? (typeof j.error?.code === 'string' ? j.error.code : j.error?.type) : undefined;
  const code = typeof kind === 'string' ? kind.slice(0, 64) : undefined;
  return { status: res.status, message, retryAfterMs: parseRetryAfter(res.header('retry-after')) ?? hints.retryAfterMs, hints, param, code };
}

/**
 * 400 `upstream_invalid_request`: the upstream refused the request (400, 404, 413, 422); 400
 * `content_filter` when its content filter did (`ErrorHints.contentFilter`). Its status
 * is kept for adapters whose answer depends on it (a transcription backend's 404 is a model or
 * deployment the operator configured that it does not have, not the caller's file).
 */
export class UpstreamRefusal extends ApiError {
  constructor(
    readonly upstreamStatus: number,
    message: string,
    code = 'upstream_invalid_request',
    details?: Record<string, unknown>,
    /** The field the upstream named at fault (its `error.param`), for adapters that answer by it. */
    readonly upstreamParam?: string,
  ) {
    super(400, code, message, { details });
  }
}

/**
 * Maps an upstream failure to the gateway's error. An upstream 401/403 (or a key the provider's body
 * says it refused) keeps its status only when the caller sent its own key (passthrough): the caller
 * can fix that. When the platform's credential was refused, the caller did nothing wrong, so it is a
 * 502, and the upstream's message (which may quote part of the platform's key) is not passed on. An
 * upstream not set up to serve the model (`misconfigured`) is a 502 too, with its message.
 */
export function upstreamFailure(a: ErrorAnswer, callerKey: boolean, conversation = false): ApiError {
  const { status, message: msg, retryAfterMs: retryAfter } = a;
  if (status === 429) return errors.upstreamRateLimited(Math.ceil((retryAfter ?? 1000) / 1000));
  if (status === 401 || status === 403 || a.hints.keyRefused) {
    if (callerKey) return new ApiError(status === 403 ? 403 : 401, 'upstream_auth_failed', `Upstream refused your key: ${msg}`);
    return new ApiError(502, 'upstream_auth_failed', `Upstream refused the gateway's credential for this model (status ${status}); this is not about your API key.`);
  }
  if (status === 402) return billingRefused(msg, callerKey);
  if (a.hints.misconfigured) return errors.upstreamError(`The upstream is not set up to serve this model (status ${status}): ${msg}`);
  // A content-filter block: 400 `content_filter` with the upstream's own message (the request is not malformed)
  if (a.hints.contentFilter && status === 400) return new UpstreamRefusal(status, msg, 'content_filter', a.hints.contentFilter.detail);
  // An input longer than the model's context window: OpenAI's 400 `context_length_exceeded` (context-window.ts)
  if (conversation && (status === 400 || status === 413 || status === 422) && contextWindowExceeded(a.code, msg)) return contextTooLong(msg);
  if (status === 400 || status === 404 || status === 413 || status === 422) {
    return new UpstreamRefusal(status, `Upstream rejected the request: ${msg}`, undefined, undefined, a.param);
  }
  if (status === 503 || status === 529) return errors.upstreamUnavailable(`Upstream unavailable: ${msg}`, Math.ceil((retryAfter ?? 1000) / 1000));
  return errors.upstreamError(`Upstream failed with status ${status}: ${msg}`);
}

/**
 * An upstream's 402 (Anthropic's `billing_error`: the account behind the key cannot pay). On the
 * caller's own key (passthrough) the caller's account is out of credit: 402 `upstream_billing_error`
 * with the upstream's message, as the vendor would have answered the caller (each dialect gives it its
 * type: Anthropic's `billing_error`, OpenAI's `insufficient_quota`). On the platform's credential it
 * is the operator's account: a 502, and the upstream's message, which is about that account, is not
 * passed on.
 */
function billingRefused(msg: string, callerKey: boolean): ApiError {
  if (callerKey) return new ApiError(402, 'upstream_billing_error', `The upstream refused to bill your key: ${msg}`);
  return errors.upstreamError("The upstream refused the gateway's credential for this model for billing reasons (status 402); this is not about your API key.");
}

/**
 * One upstream call with the gateway's retry policy: only connect errors and 429/502/503 responses
 * (nothing has been streamed to the client yet at that point) are retried, after the upstream's
 * Retry-After when given (its header, or its body through `errorHints`), never past the job's
 * deadline. Returns the first response with an ok status. The job's signal ends the call on cancel
 * and at the deadline.
 */
export async function fetchUpstream(url: string, init: UpstreamInit, policy: FetchPolicy): Promise<UpstreamResponse> {
  const retries = policy.retries ?? 2;
  const signal = policy.signal;
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) throw signal.reason;
    if (Date.now() >= policy.deadline) throw errors.deadline();
    let res: UpstreamResponse;
    try {
      // The first-byte limit is undici's own per-request headers timeout (no second signal, timer and
      // AbortSignal.any per call: docs/benchmark.md, issue 29); undici closes the connection when it fires.
      const headersTimeout = policy.firstByteTimeoutMs ?? 0;
      const { origin, path } = originAndPath(url);
      // a job's CancelSource goes to undici as it is: no AbortSignal, no EventTarget listener per call (cancel-source.ts)
      res = new UpstreamResponse(await upstreamAgent().request({ origin, path, method: init.method as Dispatcher.HttpMethod, headers: init.headers, body: init.body, signal: signal as AbortSignal, headersTimeout }));
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if ((err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT') throw noAnswerWithin(policy.firstByteTimeoutMs);
      if (attempt < retries && isConnectError(err)) {
        await sleep(Math.min(MAX_BACKOFF_MS, 100 * 2 ** attempt), signal);
        continue;
      }
      throw noted(unreachable(err), { status: 0 });
    }
    if (res.ok) {
      const big = tooLarge(res);
      if (big) throw big;
      return res;
    }
    const answer = await readErrorAnswer(res, policy.errorHints);
    if (attempt < retries && RETRYABLE_STATUS.has(res.status)) {
      const wait = answer.retryAfterMs ?? 200 * 2 ** attempt;
      if (Date.now() + wait < policy.deadline && wait <= MAX_BACKOFF_MS) {
        await sleep(wait, signal);
        continue;
      }
    }
    throw noted(upstreamFailure(answer, !!policy.callerKey, policy.conversation), { status: res.status, retryAfterMs: answer.retryAfterMs });
  }
}
