import { convert } from 'html-to-text';
import { guardedFetch, GuardedFetchError, type Resolver } from '../../../shared/net/ssrf';
import { domainRefusal } from '../../../shared/net/domains';
import { fetchErrors } from './errors';

export interface FetchPageOptions {
  allowedDomains?: string[];
  blockedDomains?: string[];
  /** Bytes read from the network at most (default 2 MiB). */
  maxBytes?: number;
  /** The whole fetch, redirects included (default 10 s). */
  timeoutMs?: number;
  /** Characters of text handed to the model at most (default 100,000); longer pages are cut. */
  maxChars?: number;
  /** Operator-trusted CIDRs the SSRF guard lets through (default none). */
  allowCidrs?: string[];
  /** Extra CA certificates (PEM) to trust besides the system ones. */
  ca?: string | Buffer;
  /** Name resolution; default the system resolver. */
  resolve?: Resolver;
  /** Redirects followed at most (default 3); each hop is checked again. */
  maxRedirects?: number;
  /** A fetch that got no answer fails at once, its `fetch_failed` carrying the ms left to the deadline (`holdMs`) for the pod to wait. */
  deferDeadline?: boolean;
}

export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  title?: string;
  /** The media type without parameters, e.g. `text/html`. */
  contentType: string;
  content: string;
  truncated: boolean;
  retrievedAt: string;
}

const TEXT_TYPES = [/^text\//, /^application\/(xhtml\+xml|json|xml|[a-z.+-]+\+(json|xml))$/, /^application\/(javascript|x-ndjson)$/];
const DEFAULTS = { maxBytes: 2 * 1024 * 1024, timeoutMs: 10_000, maxChars: 100_000 };

/** A Content-Type's media type without parameters, lower-cased (`application/octet-stream` when absent). */
const mediaTypeOf = (contentType: string | undefined) => (contentType ?? '').split(';')[0].trim().toLowerCase() || 'application/octet-stream';

/** Only text pages are read: any other type is refused on its headers, before its body is downloaded. */
function checkType(contentType: string | undefined): void {
  const mediaType = mediaTypeOf(contentType);
  if (!TEXT_TYPES.some((re) => re.test(mediaType))) throw fetchErrors.unsupportedType(mediaType);
}

function titleOf(html: string): string | undefined {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const t = m ? convert(m[1], { wordwrap: false }).trim() : '';
  return t || undefined;
}

function charsetOf(contentType: string): BufferEncoding {
  const cs = /charset=["']?([\w-]+)/i.exec(contentType)?.[1]?.toLowerCase();
  return cs === 'iso-8859-1' || cs === 'latin1' || cs === 'windows-1252' ? 'latin1' : 'utf8';
}

/** Checks the URL's form and the request's domain filters before anything is resolved. */
function vetUrl(raw: string, o: FetchPageOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw fetchErrors.notAllowed('The URL is not valid.');
  }
  if (url.protocol !== 'https:') throw fetchErrors.notAllowed('Only https URLs are fetched.');
  const refusal = domainRefusal(url.hostname.replace(/^\[|\]$/g, ''), o.allowedDomains, o.blockedDomains);
  if (refusal) throw fetchErrors.notAllowed(refusal);
  return url;
}

/**
 * The native web fetch: an https page, through the images SSRF guard (every resolved address
 * checked, the connection pinned to the checked address, every redirect hop checked again), the
 * request's domain filters on the first URL and on every redirect target, size and time caps, text
 * content types only (checked on the headers, before the body is read), HTML converted to plain
 * text. Refusals are ApiErrors (`fetch_not_allowed`, `fetch_failed`, `fetch_too_large`,
 * `unsupported_content_type`).
 */
export async function fetchPage(raw: string, opts: FetchPageOptions = {}, signal?: AbortSignal): Promise<FetchedPage> {
  const o = { ...DEFAULTS, ...opts };
  vetUrl(raw, o);
  // The guard checks every hop (the first URL and each redirect target) with the domain filters too.
  const checkUrl = (url: URL) => {
    const refusal = domainRefusal(url.hostname.replace(/^\[|\]$/g, ''), o.allowedDomains, o.blockedDomains);
    if (refusal) throw fetchErrors.notAllowed(refusal);
  };
  let got;
  try {
    got = await guardedFetch(raw, {
      maxBytes: o.maxBytes,
      timeoutMs: o.timeoutMs,
      maxRedirects: o.maxRedirects,
      allowCidrs: o.allowCidrs,
      ca: o.ca,
      resolve: o.resolve,
      checkUrl,
      checkType,
      signal,
      deferDeadline: o.deferDeadline,
      accept: 'text/html, text/plain;q=0.9, text/*;q=0.8, application/xhtml+xml, application/json;q=0.5',
    });
  } catch (err) {
    if (!(err instanceof GuardedFetchError)) throw err;
    if (signal?.aborted) throw err;
    if (err.kind === 'not_allowed') throw fetchErrors.notAllowed(err.message);
    if (err.kind === 'too_large') throw fetchErrors.tooLarge(o.maxBytes);
    throw fetchErrors.failed(err.message, err.holdMs);
  }
  const contentType = got.contentType ?? '';
  const mediaType = mediaTypeOf(contentType);
  const body = got.body.toString(charsetOf(contentType));
  const html = mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
  const full = html ? convert(body, { wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }] }) : body;
  const truncated = full.length > o.maxChars;
  return {
    url: got.url,
    title: html ? titleOf(body) : undefined,
    contentType: mediaType,
    content: truncated ? full.slice(0, o.maxChars) : full,
    truncated,
    retrievedAt: new Date().toISOString(),
  };
}
