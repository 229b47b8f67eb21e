import type { ErrorHints } from '../http';

/**
 * What a Gemini API error body (google.rpc.Status: `{error: {code, message, status, details}}`) says
 * beyond its message. Google sends no Retry-After header: the wait of a 429 is a RetryInfo detail
 * (`"retryDelay": "53s"`, a protobuf Duration). An invalid key is a 400 INVALID_ARGUMENT whose
 * ErrorInfo reason is API_KEY_INVALID. FAILED_PRECONDITION (the free tier not offered in the
 * project's country, billing not enabled) is the operator's account, not the caller's request.
 */
type Detail = { '@type'?: unknown; retryDelay?: unknown; reason?: unknown };

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

/** A protobuf Duration in JSON ("53s", "53.016342224s") → milliseconds. */
export function durationMs(v: unknown): number | undefined {
  const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(v) : null;
  return m ? Math.round(Number(m[1]) * 1000) : undefined;
}

export function googleErrorHints(_status: number, body: unknown): ErrorHints {
  const error = (body as { error?: { status?: unknown; details?: unknown } } | null)?.error;
  const details = (Array.isArray(error?.details) ? error.details : []) as Detail[];
  const retryAfterMs = durationMs(details.find((d) => d?.['@type'] === RETRY_INFO)?.retryDelay);
  return {
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(details.some((d) => d?.['@type'] === ERROR_INFO && d.reason === 'API_KEY_INVALID') ? { keyRefused: true } : {}),
    ...(error?.status === 'FAILED_PRECONDITION' ? { misconfigured: true } : {}),
  };
}
