import { ApiError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';

export interface FetchPolicy {
  signal: AbortSignal;
  deadline: number;
  /** Retries of safe failures (connect errors, 429, 502, 503 before any byte). Default 2. */
  retries?: number;
}

const RETRYABLE_STATUS = new Set([429, 502, 503]);
const MAX_BACKOFF_MS = 5_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
  });
}

/** Seconds or an HTTP date, as upstreams send it. */
export function parseRetryAfter(h: string | null): number | undefined {
  if (!h) return undefined;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const d = Date.parse(h);
  return Number.isFinite(d) ? Math.max(0, d - Date.now()) : undefined;
}

function isConnectError(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } })?.cause;
  return ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'].includes(cause?.code ?? '');
}

async function upstreamMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const j = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    const m = typeof j.error === 'string' ? j.error : j.error?.message ?? j.message;
    if (m) return m.slice(0, 500);
  } catch {
    /* not JSON */
  }
  return text.slice(0, 200) || `status ${res.status}`;
}

/** Maps an upstream failure status to the gateway's error. */
export async function upstreamFailure(res: Response): Promise<ApiError> {
  const msg = await upstreamMessage(res);
  const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
  if (res.status === 429) return errors.upstreamRateLimited(Math.ceil((retryAfter ?? 1000) / 1000));
  if (res.status === 401 || res.status === 403) return new ApiError(res.status, 'upstream_auth_failed', `Upstream refused the credential: ${msg}`);
  if (res.status === 400 || res.status === 404 || res.status === 413 || res.status === 422) {
    return new ApiError(400, 'upstream_invalid_request', `Upstream rejected the request: ${msg}`);
  }
  if (res.status === 503) return errors.upstreamUnavailable(`Upstream unavailable: ${msg}`, Math.ceil((retryAfter ?? 1000) / 1000));
  return errors.upstreamError(`Upstream failed with status ${res.status}: ${msg}`);
}

/**
 * fetch with the gateway's retry policy: only connect errors and 429/502/503 responses (nothing has
 * been streamed to the client yet at that point) are retried, after the upstream's Retry-After when
 * given, never past the job's deadline. Returns the first response with an ok status.
 */
export async function fetchUpstream(url: string, init: RequestInit, policy: FetchPolicy): Promise<Response> {
  const retries = policy.retries ?? 2;
  const timeout = AbortSignal.timeout(Math.max(1, policy.deadline - Date.now()));
  const signal = AbortSignal.any([policy.signal, timeout]);
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, { ...init, signal });
    } catch (err) {
      if (policy.signal.aborted) throw policy.signal.reason;
      if (timeout.aborted) throw errors.deadline();
      if (attempt < retries && isConnectError(err)) {
        await sleep(Math.min(MAX_BACKOFF_MS, 100 * 2 ** attempt), signal);
        continue;
      }
      throw errors.upstreamUnavailable(`Could not reach the upstream: ${(err as Error).message}`);
    }
    if (res.ok) return res;
    if (attempt < retries && RETRYABLE_STATUS.has(res.status)) {
      const wait = parseRetryAfter(res.headers.get('retry-after')) ?? 200 * 2 ** attempt;
      if (Date.now() + wait < policy.deadline && wait <= MAX_BACKOFF_MS) {
        await res.body?.cancel().catch(() => undefined);
        await sleep(wait, signal);
        continue;
      }
    }
    throw await upstreamFailure(res);
  }
}
