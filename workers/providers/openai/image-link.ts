import { config } from '../../../shared/config/env';
import { realSignal } from '../../../shared/cancel-source';
import { errors } from '../../../shared/errors/codes';
import { logger } from '../../../shared/logger';
import { trustedFetch } from '../../../shared/net/fetch-trust';
import { fetchUpstream } from '../http';
import { GuardedFetchError, shownUrl } from '../../../shared/net/ssrf';
import type { UpstreamCall } from '../types';

/**
 * The bytes of an image an upstream's images answer links to (`data[].url`, dall-e's
 * `response_format: url`). The upstream chose the URL, and an upstream can be compromised or run
 * by the operator inside its own network, so the link is fetched as a caller's URL is: through the
 * SSRF guard with the operator's fetch trust (https only; public addresses unless
 * IMAGE_FETCH_ALLOW_CIDRS trusts the range, never link-local or metadata), at most
 * UPSTREAM_MAX_RESPONSE_BYTES, within IMAGE_FETCH_TIMEOUT_MS and the job's deadline. Any refusal or
 * failure is 502 `upstream_error` (the upstream answered unusably): the reason is logged, never answered.
 * A link on the deployment's own origin (scheme, host and port of its base URL: a self-hosted server
 * linking its own files, often over http inside the operator's network) names nothing the operator
 * did not configure, so it is fetched as the upstream call itself is.
 */
export async function linkedImageBytes(url: string, call: UpstreamCall): Promise<Buffer> {
  if (sameOrigin(url, call.baseUrl)) {
    return (await fetchUpstream(url, { method: 'GET' }, { signal: call.signal, deadline: call.deadline })).bytes();
  }
  const cfg = config();
  const signal = realSignal(call.signal);
  const timeoutMs = Math.max(1, Math.min(cfg.imageFetchTimeoutMs, call.deadline - Date.now()));
  try {
    return (await trustedFetch(url, { maxBytes: cfg.upstreamMaxResponseBytes, timeoutMs, accept: 'image/png, image/jpeg, image/webp', signal })).body;
  } catch (err) {
    if (signal.aborted) throw signal.reason ?? err;
    if (!(err instanceof GuardedFetchError)) throw err;
    // the reason without the link itself (a signed CDN link carries its signature in the query)
    logger.warn({ model: call.upstreamModel, kind: err.kind, reason: err.message.split(shownUrl(url)).join('<link>') }, 'image link in an upstream answer not downloaded');
    throw errors.upstreamError('The upstream answered with an image link the gateway could not download.');
  }
}

function sameOrigin(url: string, baseUrl: string): boolean {
  try {
    return new URL(url).origin === new URL(baseUrl).origin;
  } catch {
    return false;
  }
}
