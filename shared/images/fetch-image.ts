import { guardedFetch, GuardedFetchError } from '../net/ssrf';
import { fetchTrust } from '../net/fetch-trust';
import { imageErrors } from './errors';

/**
 * Downloads an image a caller named by URL through the SSRF guard (shared/net/ssrf.ts) with the
 * operator's fetch trust; the guard's refusals become the image codes (`url_not_allowed`,
 * `image_too_large` at `maxBytes`, `image_fetch_failed`). A cancelled download throws the signal's reason.
 * Used by image URL uploads and by the images inlined for self-hosted upstreams.
 */
export async function fetchImage(url: string, opts: { maxBytes: number; timeoutMs: number; accept: string; signal: AbortSignal }): Promise<Buffer> {
  const trust = fetchTrust();
  try {
    const got = await guardedFetch(url, { maxBytes: opts.maxBytes, timeoutMs: opts.timeoutMs, accept: opts.accept, signal: opts.signal, allowCidrs: trust.allowCidrs, ca: trust.ca });
    return got.body;
  } catch (err) {
    if (opts.signal.aborted) throw opts.signal.reason ?? err;
    if (!(err instanceof GuardedFetchError)) throw err;
    if (err.kind === 'not_allowed') throw imageErrors.urlNotAllowed(err.message);
    if (err.kind === 'too_large') throw imageErrors.tooLarge(opts.maxBytes);
    throw imageErrors.fetchFailed(err.message);
  }
}
