import { ApiError } from '../../../shared/errors/ApiError';
import { errors } from '../../../shared/errors/codes';
import { noted, unreachable } from '../http';
import type { CancelSignal } from '../../../shared/cancel-source';
import { contextTooLong, contextWindowExceeded } from '../../../shared/errors/context-window';

type SdkError = Error & { name: string; $fault?: string; $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> }; code?: string };

const CONNECT = /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|socket hang up|EPIPE/;

/**
 * A Bedrock failure (an SDK exception: an HTTP error answer, an in-stream exception event, an
 * unreadable body, a connection lost mid-stream, or no connection) → the gateway's error, as `upstreamFailure` does for HTTP
 * upstreams. When the platform's credential is refused the caller did nothing wrong: 502. An answer
 * refused before any of it was read carries its status and Retry-After for the pool's router (as
 * fetchUpstream's errors do), so a throttled deployment cools down for as long as AWS asks.
 */
export function bedrockFailure(err: unknown, signal: CancelSignal, callerKey = false, midStream = false): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof ApiError) return err;
  const e = err as SdkError;
  const header = Number(e?.$response?.headers?.['retry-after']);
  const retryAfterS = Number.isFinite(header) && header > 0 ? header : undefined;
  const mapped = mapFailure(e, callerKey, midStream, retryAfterS ?? 1);
  if (midStream || !(mapped instanceof ApiError)) return mapped;
  const status = e?.$metadata?.httpStatusCode;
  const retryAfterMs = retryAfterS === undefined ? undefined : retryAfterS * 1000;
  // what the router reads: the throttling kinds as 429 (a quota refusal is a 400 AWS says to resubmit later), no connection as 0
  const routed = mapped.code === 'upstream_rate_limited' ? 429 : status ?? (mapped.code === 'upstream_unavailable' ? 0 : undefined);
  if (routed === undefined) return mapped;
  return noted(mapped, { status: routed, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

/** The gateway's error for an SDK failure; `after`: the Retry-After seconds to answer (the upstream's, else 1). */
function mapFailure(e: SdkError, callerKey: boolean, midStream: boolean, after: number): unknown {
  const status = e?.$metadata?.httpStatusCode;
  const msg = `${e?.name ?? 'Error'}: ${String(e?.message ?? '')}`.slice(0, 500);
  switch (e?.name) {
    case 'ThrottlingException':
    case 'ModelNotReadyException':
    case 'ServiceQuotaExceededException': // a 400 that AWS documents as "You can resubmit your request later"
      return errors.upstreamRateLimited(after);
    case 'ServiceUnavailableException':
      return errors.upstreamUnavailable(`Upstream unavailable: ${msg}`, after);
    case 'ModelTimeoutException':
    case 'InternalServerException':
    case 'ModelStreamErrorException':
    case 'ModelErrorException':
      return errors.upstreamError(`Upstream failed: ${msg}`);
    case 'ValidationException':
      // "Input is too long for requested model.", Claude's "prompt is too long": OpenAI's context_length_exceeded
      if (contextWindowExceeded(undefined, String(e?.message ?? ''))) return contextTooLong(msg);
      return new ApiError(400, 'upstream_invalid_request', `Upstream rejected the request: ${msg}`);
    case 'ResourceNotFoundException':
    case 'ConflictException':
      return new ApiError(400, 'upstream_invalid_request', `Upstream rejected the request: ${msg}`);
    case 'AccessDeniedException':
    case 'UnrecognizedClientException':
    case 'ExpiredTokenException':
      break;
    default:
      if (!status) {
        if (midStream) return errors.upstreamError('The upstream stream broke off before its end.');
        if (CONNECT.test(`${e?.code ?? ''} ${e?.message ?? ''}`)) return unreachable(e);
        return errors.upstreamError('The upstream answered with a malformed body.');
      }
  }
  if (status && status < 300) return errors.upstreamError('The upstream answered with a malformed body.'); // a 200 the SDK could not read
  if (status === 401 || status === 403) {
    if (callerKey) return new ApiError(status, 'upstream_auth_failed', `Upstream refused your key: ${msg}`);
    return new ApiError(502, 'upstream_auth_failed', `Upstream refused the gateway's credential for this model (status ${status}); this is not about your API key.`);
  }
  if (status === 429) return errors.upstreamRateLimited(after);
  if (status === 503) return errors.upstreamUnavailable(`Upstream unavailable: ${msg}`, after);
  if (status && status >= 400 && status < 500) return new ApiError(400, 'upstream_invalid_request', `Upstream rejected the request: ${msg}`);
  return errors.upstreamError(`Upstream failed with status ${status}: ${msg}`);
}
