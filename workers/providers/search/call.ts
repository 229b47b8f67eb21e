import { fetchUpstream, type UpstreamInit, type UpstreamResponse } from '../http';
import { ApiError } from '../../../shared/errors/ApiError';
import type { SearchCall } from './types';

/**
 * One provider call with the workers' retry policy (connect errors, 429/502/503, within the
 * deadline), its failures mapped to the search codes. Messages are the gateway's own: a provider's
 * error text is never passed on, since some echo the key they were sent.
 */
export async function callProvider(provider: string, url: string, init: UpstreamInit, call: SearchCall): Promise<UpstreamResponse> {
  try {
    return await fetchUpstream(url, init, { signal: call.signal, deadline: call.deadline, retries: 1, callerKey: call.keySource === 'own' });
  } catch (err) {
    throw searchFailure(provider, err, call);
  }
}

export function searchFailure(provider: string, err: unknown, call: SearchCall): unknown {
  if (!(err instanceof ApiError)) return err;
  const retryAfter = Number(err.headers['Retry-After'] ?? 1);
  switch (err.code) {
    case 'upstream_rate_limited':
      return new ApiError(429, 'search_provider_rate_limited', `The search provider '${provider}' is rate limiting; retry later.`, { retryAfter });
    case 'upstream_auth_failed':
      return call.keySource === 'own'
        ? new ApiError(400, 'search_provider_auth_failed', `The search provider '${provider}' refused your organization's own key; replace it with \`gateway search-keys set --provider ${provider}\`.`)
        : new ApiError(502, 'search_provider_auth_failed', `The search provider '${provider}' refused the platform's key; this is not about your API key.`);
    case 'upstream_invalid_request':
      return new ApiError(502, 'search_provider_error', `The search provider '${provider}' rejected the request.`);
    case 'upstream_unavailable':
      return new ApiError(503, 'search_provider_unavailable', `The search provider '${provider}' is unavailable; retry later.`, { retryAfter });
    case 'upstream_error':
      return new ApiError(502, 'search_provider_error', `The search provider '${provider}' failed.`);
    default:
      return err;
  }
}

/** Reads a JSON body; a malformed one is the provider's failure. */
export async function jsonBody<T>(provider: string, res: UpstreamResponse): Promise<T> {
  try {
    return (await res.json()) as T;
  } catch {
    throw new ApiError(502, 'search_provider_error', `The search provider '${provider}' answered with a malformed body.`);
  }
}

export function malformed(provider: string): ApiError {
  return new ApiError(502, 'search_provider_error', `The search provider '${provider}' answered with a malformed body.`);
}

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}
