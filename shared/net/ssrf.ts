import dns from 'dns';
import https from 'https';
import net from 'net';
import tls from 'tls';
import type { IncomingMessage } from 'http';
import { socketErrorCode } from './error-code';
import { cidrList, inList, isBlockedAddress, isNeverTrusted } from './ip-ranges';
import { logger } from '../logger';

export type Resolved = { address: string; family: 4 | 6 };
export type Resolver = (hostname: string) => Promise<Resolved[]>;

/** Why a guarded fetch refused or failed; callers map it to their endpoint's codes. */
export class GuardedFetchError extends Error {
  constructor(
    readonly kind: 'not_allowed' | 'too_large' | 'failed',
    message: string,
    /** A fetch that got no answer, with `deferDeadline`: the ms left to its deadline, to be waited by whoever tells it. */
    readonly holdMs?: number,
  ) {
    super(message);
    this.name = 'GuardedFetchError';
  }
}

/**
 * No answer to judge: the name did not resolve, the connection was refused or reset, TLS failed, the
 * server never answered or closed mid-body, the deadline passed. Which one it was stays in the log
 * (`guardedFetch`): told to the caller, it would map which ports of a host are open.
 */
class NoAnswer extends Error {
  constructor(
    readonly stage: 'resolve' | 'connect' | 'read',
    readonly host: string,
    readonly reason: unknown,
  ) {
    super('no answer');
  }
}

export interface GuardOptions {
  /** The body is refused past this many bytes (checked on Content-Length and while reading). */
  maxBytes: number;
  /** The whole fetch, redirects included. */
  timeoutMs: number;
  maxRedirects?: number;
  /** Operator-trusted CIDRs that may be reached despite the blocked ranges (default none); never link-local or metadata (ip-ranges.ts `isNeverTrusted`). */
  allowCidrs?: string[];
  /** Extra CA certificates (PEM) to trust besides the system ones. */
  ca?: string | Buffer;
  /** Name resolution; default the system resolver (dns.lookup, every address). */
  resolve?: Resolver;
  accept?: string;
  /** The caller's cancellation, combined with the time cap. */
  signal?: AbortSignal;
  /** The caller's own check of every hop's URL (e.g. a domain filter), before it is resolved; what it throws propagates. */
  checkUrl?: (url: URL) => void;
  /** The caller's check of the final answer's Content-Type, before any of its body is read; what it throws propagates. */
  checkType?: (contentType: string | undefined) => void;
  /**
   * A fetch that got no answer fails at once with the ms left to its deadline (GuardedFetchError.holdMs)
   * instead of waiting them out here: the caller waits, before telling the failure, where the wait holds
   * nothing (the native fetch's worker slot and search lane are free while the pod waits).
   */
  deferDeadline?: boolean;
}

export interface GuardedResponse {
  url: string;
  contentType: string | undefined;
  body: Buffer;
}

const BLOCKED_NAMES = [/^localhost$/i, /\.localhost$/i, /^metadata$/i, /^metadata\.google\.internal$/i];
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const systemResolve: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));

/** Resolves once `signal` aborts (the fetch's deadline, or the caller's cancellation). */
const untilAborted = (signal: AbortSignal) =>
  signal.aborted ? Promise.resolve() : new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

/**
 * Checks one URL and picks the address to connect to. https only; every address the name resolves
 * to must be public (one private answer refuses the whole name, so a rebinding resolver cannot
 * slip one through), unless the operator trusts its range (never link-local or a metadata service).
 */
async function vet(url: URL, opts: GuardOptions, signal: AbortSignal): Promise<Resolved> {
  if (url.protocol !== 'https:') throw new GuardedFetchError('not_allowed', 'Only https URLs are fetched.');
  if (url.username || url.password) throw new GuardedFetchError('not_allowed', 'URLs with credentials are not fetched.');
  opts.checkUrl?.(url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // `localhost.` (fully qualified, trailing dot) is the same name as `localhost`
  if (BLOCKED_NAMES.some((re) => re.test(host.replace(/\.+$/, '')))) throw new GuardedFetchError('not_allowed', 'The URL names a local or metadata host.');
  const trusted = cidrList(opts.allowCidrs ?? []);
  let addresses: Resolved[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) as 4 | 6 }];
  else {
    try {
      // a resolver that never answers is held to the fetch's deadline too
      addresses = await Promise.race([(opts.resolve ?? systemResolve)(host), untilAborted(signal).then(() => Promise.reject(new Error('deadline passed')))]);
    } catch (err) {
      throw new NoAnswer('resolve', url.host, err);
    }
    if (addresses.length === 0) throw new NoAnswer('resolve', url.host, 'no address');
  }
  for (const a of addresses) {
    if (isBlockedAddress(a.address) && (!inList(trusted, a.address) || isNeverTrusted(a.address))) {
      throw new GuardedFetchError('not_allowed', 'The URL resolves to a private, loopback, link-local or metadata address.');
    }
  }
  return addresses[0];
}

/** One GET to the vetted address (the connection is pinned to it; TLS still checks the name). */
function request(url: URL, to: Resolved, opts: GuardOptions, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'GET',
        agent: false,
        // Extra CAs are trusted in addition to the system roots, never instead of them.
        ca: opts.ca ? [...tls.rootCertificates, opts.ca] : undefined,
        headers: { accept: opts.accept ?? '*/*', 'user-agent': 'inference-gateway-fetch/1' },
        lookup: (_host: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) =>
          o?.all ? cb(null, [{ address: to.address, family: to.family }]) : cb(null, to.address, to.family),
        signal,
      } as https.RequestOptions,
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

async function readCapped(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw new GuardedFetchError('too_large', `The resource is larger than ${maxBytes} bytes.`);
  }
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of res) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      res.destroy();
      throw new GuardedFetchError('too_large', `The resource is larger than ${maxBytes} bytes.`);
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

/** How long a URL named in a refusal may be: a URL can be megabytes long, an error body should not be. */
const SHOWN_URL_CHARS = 256;

/** A URL as a refusal names it: cut at SHOWN_URL_CHARS characters, with an ellipsis where it was cut. */
export function shownUrl(raw: string): string {
  return raw.length > SHOWN_URL_CHARS ? `${raw.slice(0, SHOWN_URL_CHARS)}…` : raw;
}

/**
 * GET a caller-supplied URL without letting it reach the gateway's own network: the scheme, the
 * name and every resolved address are checked before connecting, again on every redirect, the
 * connection goes to the checked address only, and the body is capped while it is read.
 *
 * A fetch that got no answer (NoAnswer) fails with one message, `Error while downloading <url>.`, at
 * the fetch's deadline whatever happened: a refused port answering at once and a filtered or silent
 * one at the deadline would tell the caller which ports are open. The detail goes to the log only.
 * An answer the server gave (an error status, redirects) is told as such, never its body.
 */
export async function guardedFetch(raw: string, opts: GuardOptions): Promise<GuardedResponse> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GuardedFetchError('not_allowed', 'The URL is not valid.');
  }
  const deadline = Date.now() + opts.timeoutMs;
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  try {
    return await followHops(url, raw, opts, signal);
  } catch (err) {
    if (!(err instanceof NoAnswer)) throw err;
    const reason = err.reason as { message?: unknown } | undefined;
    logger.info(
      { host: err.host, stage: err.stage, code: socketErrorCode(err.reason), reason: typeof reason?.message === 'string' ? reason.message : String(reason), timedOut: timeout.aborted },
      'guarded fetch got no answer',
    );
    const message = `Error while downloading ${shownUrl(raw)}.`;
    if (opts.deferDeadline && !signal.aborted) throw new GuardedFetchError('failed', message, Math.max(0, deadline - Date.now()));
    await untilAborted(signal);
    throw new GuardedFetchError('failed', message);
  }
}

/** The hops of one guarded fetch (see guardedFetch); a failure with no answer to judge is NoAnswer. */
async function followHops(first: URL, raw: string, opts: GuardOptions, signal: AbortSignal): Promise<GuardedResponse> {
  let url = first;
  const maxRedirects = opts.maxRedirects ?? 3;
  for (let hop = 0; ; hop++) {
    const to = await vet(url, opts, signal);
    let res: IncomingMessage;
    try {
      res = await request(url, to, opts, signal);
    } catch (err) {
      throw new NoAnswer('connect', url.host, signal.aborted ? 'deadline passed' : err);
    }
    const status = res.statusCode ?? 0;
    // A body not read is not drained either (it may never end): the answer's connection is closed.
    if (REDIRECTS.has(status) && res.headers.location) {
      res.destroy();
      if (hop >= maxRedirects) throw new GuardedFetchError('failed', `Error while downloading ${shownUrl(raw)}: too many redirects.`);
      try {
        url = new URL(res.headers.location, url);
      } catch {
        throw new GuardedFetchError('failed', `Error while downloading ${shownUrl(raw)}: it redirected to an invalid location.`);
      }
      continue;
    }
    if (status < 200 || status >= 300) {
      res.destroy();
      throw new GuardedFetchError('failed', `Error while downloading ${shownUrl(raw)}: the server answered HTTP ${status}.`);
    }
    try {
      opts.checkType?.(res.headers['content-type']);
    } catch (err) {
      res.destroy();
      throw err;
    }
    try {
      const body = await readCapped(res, opts.maxBytes);
      return { url: url.toString(), contentType: res.headers['content-type'], body };
    } catch (err) {
      if (err instanceof GuardedFetchError) throw err;
      throw new NoAnswer('read', url.host, signal.aborted ? 'deadline passed' : err);
    }
  }
}
