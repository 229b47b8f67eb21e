import crypto from 'crypto';
import { hmac } from '../crypto';

/**
 * Signed content URLs when the gateway serves the bytes itself: an HMAC (SECRET_KEY) over the image
 * id and the expiry. Anyone holding the URL may read the bytes until it expires; nothing else is
 * needed, so a browser can follow the redirect.
 */
export function signature(id: string, expires: number): string {
  return hmac(`image-content:${id}:${expires}`);
}

export type Verdict = 'ok' | 'invalid' | 'expired';

/** Checks a presented signature (constant time) and then its expiry (epoch seconds). */
export function verify(id: string, expiresRaw: unknown, sig: unknown, nowMs: number): Verdict {
  if (typeof expiresRaw !== 'string' || !/^\d{1,12}$/.test(expiresRaw) || typeof sig !== 'string') return 'invalid';
  const expected = Buffer.from(signature(id, Number(expiresRaw)));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return 'invalid';
  return Number(expiresRaw) * 1000 <= nowMs ? 'expired' : 'ok';
}
