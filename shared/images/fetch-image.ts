import { GuardedFetchError } from '../net/ssrf';
import { trustedFetch } from '../net/fetch-trust';
import { imageErrors } from './errors';

/**
 * Downloads an image a caller named by URL through the SSRF guard (shared/net/ssrf.ts) with the
 * operator's fetch trust; the guard's refusals become the image codes (`url_not_allowed`,
 * `image_too_large` at `maxBytes`, `image_fetch_failed`: one message for every failure with no
 * answer, refused, reset, TLS, DNS or timeout alike). A cancelled download throws the signal's reason.
 * Used by image URL uploads and by the images inlined for self-hosted upstreams.
 */
export async function fetchImage(url: string, opts: { maxBytes: number; timeoutMs: number; accept: string; signal: AbortSignal }): Promise<Buffer> {
  try {
    return (await trustedFetch(url, opts)).body;
  } catch (err) {
    if (opts.signal.aborted) throw opts.signal.reason ?? err;
    if (!(err instanceof GuardedFetchError)) throw err;
    if (err.kind === 'not_allowed') throw imageErrors.urlNotAllowed(err.message);
    if (err.kind === 'too_large') throw imageErrors.tooLarge(opts.maxBytes);
    throw imageErrors.fetchFailed(err.message);
  }
}
