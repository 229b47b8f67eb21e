import fs from 'fs';
import { config } from '../config/env';

let trustedCa: { file?: string; pem?: Buffer } | undefined;

/**
 * The operator's trust for server-side fetches of caller-steered URLs (image URL uploads, images
 * inlined for self-hosted upstreams, the native web fetch; docs/security.md): `IMAGE_FETCH_ALLOW_CIDRS`
 * and `IMAGE_FETCH_CA_FILE`, the CA file read once per path.
 */
export function fetchTrust(): { allowCidrs: string[]; ca?: Buffer } {
  const cfg = config();
  if (!trustedCa || trustedCa.file !== cfg.imageFetchCaFile) trustedCa = { file: cfg.imageFetchCaFile, pem: cfg.imageFetchCaFile ? fs.readFileSync(cfg.imageFetchCaFile) : undefined };
  return { allowCidrs: cfg.imageFetchAllowCidrs, ca: trustedCa.pem };
}
