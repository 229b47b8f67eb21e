/** A domain filter entry as clients write it (`example.com`, `https://example.com/`, `.Example.COM`) → `example.com`. */
function normalise(entry: string): string {
  return entry
    .trim()
    .toLowerCase()
    .replace(/^[a-z]+:\/\//, '')
    .replace(/[/?#].*$/, '')
    .replace(/:\d+$/, '')
    .replace(/^\.+|\.+$/g, '');
}

/** True when `host` is `domain` or one of its subdomains (as Anthropic's and OpenAI's filters match). */
export function hostMatches(host: string, domain: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  const d = normalise(domain);
  return d !== '' && (h === d || h.endsWith(`.${d}`));
}

/** Why the host fails the request's allow/block lists, or undefined when it passes. */
export function domainRefusal(host: string, allowed?: string[], blocked?: string[]): string | undefined {
  if (blocked?.some((d) => hostMatches(host, d))) return `The domain '${host}' is blocked by the request's blocked_domains.`;
  if (allowed?.length && !allowed.some((d) => hostMatches(host, d))) return `The domain '${host}' is not in the request's allowed_domains.`;
  return undefined;
}
