/**
 * A socket or TLS failure's code (ECONNREFUSED, ENOTFOUND, ERR_TLS_CERT_ALTNAME_INVALID, ...), from the
 * error or its `cause` (undici wraps the socket's error). The code is the most an answer about the
 * operator's own upstream may carry: Node's messages name the resolved address and port, or every name
 * of a certificate. A fetch of a URL the gateway did not choose tells not even the code (shared/net/ssrf.ts).
 */
export function socketErrorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return [e?.code, e?.cause?.code].find((c): c is string => typeof c === 'string' && /^[A-Z0-9_]+$/.test(c));
}
