import net from 'net';
import { domainToASCII } from 'url';

/**
 * A host, or a domain filter entry as clients write it (`example.com`, `https://user@Example.COM:8443/`,
 * `.bücher.de.`, `[2001:DB8::1]`), → the form a URL's hostname has: IDNA to ASCII (punycode), lower
 * case, no scheme, userinfo, port, path, brackets or leading/trailing dots; IPv6 in its canonical form.
 * Both sides of a match go through it, so a Unicode entry matches the punycode host (and the reverse).
 */
export function normaliseHost(entry: string): string {
  let s = entry
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/[/?#].*$/, '')
    .replace(/^.*@/, '');
  const bracketed = /^\[([^\]]*)\]/.exec(s);
  if (bracketed) s = bracketed[1];
  else if (!s.includes('::') && s.split(':').length === 2) s = s.replace(/:\d*$/, '');
  s = s.replace(/^\.+|\.+$/g, '');
  if (net.isIPv6(s)) return new URL(`http://[${s}]`).hostname.slice(1, -1);
  // domainToASCII answers '' for what is no domain: such an entry keeps its text and matches no host
  return (domainToASCII(s) || s.toLowerCase()).replace(/\.+$/, '');
}

/** True when `host` is `domain` or one of its subdomains (as Anthropic's and OpenAI's filters match); an IP entry matches only itself. */
export function hostMatches(host: string, domain: string): boolean {
  const h = normaliseHost(host);
  const d = normaliseHost(domain);
  if (!d || !h) return false;
  return h === d || (net.isIP(d) === 0 && h.endsWith(`.${d}`));
}

/** Why the host fails the request's allow/block lists, or undefined when it passes. */
export function domainRefusal(host: string, allowed?: string[], blocked?: string[]): string | undefined {
  if (blocked?.some((d) => hostMatches(host, d))) return `The domain '${host}' is blocked by the request's blocked_domains.`;
  if (allowed?.length && !allowed.some((d) => hostMatches(host, d))) return `The domain '${host}' is not in the request's allowed_domains.`;
  return undefined;
}
