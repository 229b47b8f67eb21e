import { ApiError } from './ApiError';

/**
 * The challenge every 401 carries (RFC 9110 §15.5.2: a 401 MUST send WWW-Authenticate; the MCP
 * authorization spec asks the same of /mcp): inference keys and management credentials alike are
 * bearer tokens (also accepted in other headers or the path, which a challenge cannot name).
 */
export const BEARER_CHALLENGE = { 'WWW-Authenticate': 'Bearer' } as const;

/**
 * The challenge of a 401 (RFC 6750 §3.1): a request that presented a credential the server refuses
 * (unknown, revoked, expired, malformed, of the wrong kind) gets `error="invalid_token"`; one that
 * presented none gets the bare challenge ("If the request lacks any authentication information ...
 * the resource server SHOULD NOT include an error code"). No `resource_metadata` parameter (the MCP
 * authorization spec's, RFC 9728): the gateway is no OAuth resource server and publishes no
 * protected resource metadata; its keys are issued by its own console and CLI (docs/search.md).
 */
export function bearerChallenge(presented: boolean): Record<string, string> {
  return { 'WWW-Authenticate': presented ? 'Bearer error="invalid_token"' : BEARER_CHALLENGE['WWW-Authenticate'] };
}

/**
 * The challenge of a 403 for a valid credential without the scope a request needs (RFC 6750 §3.1
 * `insufficient_scope`, with the `scope` attribute naming what would serve it, §3).
 */
export function scopeChallenge(scope: string): Record<string, string> {
  return { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` };
}

/**
 * The header of a 429 no wait can cure (a request no minute of its rate limit can serve, a spent
 * search quota): the OpenAI and Anthropic SDKs obey it instead of retrying in vain; it carries no
 * Retry-After (the spec's retryable 429 is one with it). The batch runner reads it too (mayRetry).
 */
export const NOT_RETRYABLE = { 'x-should-retry': 'false' } as const;

/** Whether a refusal may be retried: not when it says NOT_RETRYABLE. */
export function mayRetry(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['x-should-retry'] !== NOT_RETRYABLE['x-should-retry'];
}

/** Factories for errors shared by several endpoints. Endpoint-specific codes live beside their routes. */
export const errors = {
  /** `presented`: the request carried a credential, refused (RFC 6750's `invalid_token`); false: it carried none. */
  invalidApiKey: (message = 'Invalid or missing API key.', presented = true) => new ApiError(401, 'INVALID_API_KEY', message, { headers: bearerChallenge(presented) }),
  notFound: (message = 'Not found.') => new ApiError(404, 'not_found', message),
  methodNotAllowed: (method: string) => new ApiError(405, 'method_not_allowed', `Method ${method} is not allowed on this path.`),
  invalidJson: () => new ApiError(400, 'invalid_json', 'The request body is not valid JSON.'),
  unsupportedMediaType: (expected: string) =>
    new ApiError(415, 'unsupported_media_type', `Content-Type must be ${expected}.`),
  payloadTooLarge: (limit: string) => new ApiError(413, 'payload_too_large', `The request body is larger than ${limit}.`),
  invalidRequest: (message: string) => new ApiError(400, 'invalid_request', message),
  // OpenAI's words for an unknown model (its API's 404 model_not_found)
  modelNotFound: (model: string) => new ApiError(404, 'model_not_found', `The model \`${model}\` does not exist or you do not have access to it.`, { param: 'model' }),
  /**
   * The Responses API's answer to an unknown model (`POST /v1/responses`, its `input_tokens` and
   * `compact`): 400, not chat's 404, "The requested model 'x' does not exist.", `param: "model"` (its
   * body as its API answers Codex, openai/codex issue 6705: `{"message": "The requested model
   * 'gpt-5-codex' does not exist.", "type": "invalid_request_error", "param": "model", "code":
   * "model_not_found"}`, and as the Python SDK's `responses.parse` raised it, 400 BadRequestError;
   * an empty id in the same words, as a recorded probe of its Responses API has it). The spec's 404
   * `model_not_found` speaks of the embeddings, rerank and decision routes only.
   */
  responsesModelNotFound: (model: string) => new ApiError(400, 'model_not_found', `The requested model '${model}' does not exist.`, { param: 'model' }),
  concurrencyLimit: (retryAfter: number) =>
    new ApiError(429, 'CONCURRENT_REQUEST_LIMIT_EXCEEDED', 'Too many concurrent requests for this organization on this lane.', {
      retryAfter,
    }),
  deadline: () => new ApiError(504, 'deadline_exceeded', 'The request did not finish before its deadline.'),
  upstreamError: (message: string) => new ApiError(502, 'upstream_error', message),
  upstreamUnavailable: (message: string, retryAfter?: number) =>
    new ApiError(503, 'upstream_unavailable', message, { retryAfter: retryAfter ?? 1 }),
  upstreamRateLimited: (retryAfter: number) =>
    new ApiError(429, 'upstream_rate_limited', 'The upstream provider is rate limiting; retry later.', { retryAfter }),
  workerLost: () => new ApiError(502, 'worker_lost', 'The worker handling this request stopped before it answered.'),
  internal: (errorId: string) =>
    new ApiError(500, 'internal_error', `An internal error occurred. Reference: ${errorId}.`),
};
