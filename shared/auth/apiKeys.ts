import crypto from 'crypto';
import { sha256Hex } from '../crypto';

export const INFERENCE_PREFIX = 'svc_';
export const PLATFORM_PREFIX = 'svc_platform_';

/** A new raw inference key: `svc_` + 40 base62 chars. Shown once, stored as SHA-256 only. */
export function generateApiKey(prefix = INFERENCE_PREFIX): { raw: string; hash: string; visiblePrefix: string } {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const bytes = crypto.randomBytes(40);
  let body = '';
  for (const b of bytes) body += alphabet[b % 62];
  const raw = `${prefix}${body}`;
  return { raw, hash: sha256Hex(raw), visiblePrefix: raw.slice(0, prefix.length + 6) };
}

/** Shape check before any lookup: an inference key is `svc_` + base62, and never a platform key. */
export function looksLikeInferenceKey(raw: string): boolean {
  return raw.startsWith(INFERENCE_PREFIX) && !raw.startsWith(PLATFORM_PREFIX) && /^svc_[0-9A-Za-z]{20,128}$/.test(raw);
}
