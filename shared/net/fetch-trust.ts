import fs from 'fs';
import { config } from '../config/env';
import { merged } from '../merged';
import { guardedFetch, type GuardedResponse, type GuardOptions } from './ssrf';

let trustedCa: { file?: string; pem?: Buffer } | undefined;

/**
 * The operator's trust for server-side fetches of URLs the gateway did not choose (image URL uploads,
 * images inlined for self-hosted upstreams, the native web fetch, image links in an upstream's
 * answer; docs/security.md): `IMAGE_FETCH_ALLOW_CIDRS` and `IMAGE_FETCH_CA_FILE`, the CA file read
 * once per path.
 */
export function fetchTrust(): { allowCidrs: string[]; ca?: Buffer } {
  const cfg = config();
  if (!trustedCa || trustedCa.file !== cfg.imageFetchCaFile) trustedCa = { file: cfg.imageFetchCaFile, pem: cfg.imageFetchCaFile ? fs.readFileSync(cfg.imageFetchCaFile) : undefined };
  return { allowCidrs: cfg.imageFetchAllowCidrs, ca: trustedCa.pem };
}

/** The SSRF guard's fetch (shared/net/ssrf.ts) with the operator's fetch trust. */
export function trustedFetch(url: string, opts: Omit<GuardOptions, 'allowCidrs' | 'ca'>): Promise<GuardedResponse> {
  return guardedFetch(url, merged(opts, fetchTrust()));
}
