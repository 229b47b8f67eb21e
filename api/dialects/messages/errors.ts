/**
 * Anthropic's error `type` for an HTTP status, so a messages client sees the type it expects.
 * Anthropic's error documentation (docs.claude.com/en/api/errors): 400 `invalid_request_error`,
 * "also used for other 4XX status codes not listed" (so 405, 408 a body-read timeout, 409, 415,
 * 422...); `timeout_error` (in the SDK's ErrorType) is the 504 gateway timeout.
 */
export function anthropicErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'billing_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  if (status === 504) return 'timeout_error';
  return 'api_error';
}
