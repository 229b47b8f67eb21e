import { ApiError } from '../errors/ApiError';
import { NOT_RETRYABLE } from '../errors/codes';

/**
 * The web search codes and the HTTP status the gateway gives each (the spec leaves statuses open;
 * docs/search.md lists them). Native interception puts the same codes in band instead.
 */
export const searchErrors = {
  /**
   * 429: the org's allowance (overage off), monthly limit, or the member's cap for the period is used
   * up. Not retryable before the period ends (`period_resets_at`): no Retry-After (the spec's
   * retryable 429 has one) and `x-should-retry: false`, which the OpenAI and Anthropic SDKs obey
   * (they retry any other 429).
   */
  quotaExceeded: (message: string, periodEnd: Date) =>
    new ApiError(429, 'quota_exceeded', message, { details: { period_resets_at: periodEnd.toISOString() }, headers: NOT_RETRYABLE }),
  /** 400: the caller named a provider that is unknown, disabled, or not in the org's allowed list (its name quoted to 64 characters). */
  providerNotAllowed: (provider: string) =>
    new ApiError(400, 'provider_not_allowed', `The search provider '${provider.slice(0, 64)}${provider.length > 64 ? '…' : ''}' is unknown or not enabled.`),
  /** 409: the org's default provider was disabled since, no provider is available, or no key exists for it. */
  providerUnconfigured: (message: string) => new ApiError(409, 'provider_unconfigured', message),
  /** 403: an org-wide or per-user tool policy denies the tool. */
  toolDisabled: (tool: string) => new ApiError(403, 'mcp_tool_disabled', `The tool '${tool}' is disabled by policy for this caller.`),
  /** 503: the operator's `web_search` kill switch is engaged. */
  webSearchDisabled: () => new ApiError(503, 'web_search_disabled', 'Web search is switched off platform-wide.'),
  /** 403: a native fetch rejected by policy (domains). */
  fetchNotAllowed: (message: string) => new ApiError(403, 'fetch_not_allowed', message),
  /** 429: the org's per-minute abuse limit on searches (own-key searches included). */
  rateLimited: (retryAfterS: number) =>
    new ApiError(429, 'search_rate_limited', 'Too many searches for this organization in the last minute; retry shortly.', { retryAfter: retryAfterS }),
};
