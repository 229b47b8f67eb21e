import crypto from 'crypto';
import { config } from './config/env';

/** AES-256-GCM with a key derived from SECRET_KEY; output is `v1.<iv>.<tag>.<ciphertext>` in base64url. */
let derived: { secret: string; key: Buffer } | undefined;

function key(): Buffer {
  const secret = config().secretKey;
  // derived once per secret: passthrough requests seal and unseal the caller's key on every request
  if (derived?.secret !== secret) derived = { secret, key: crypto.createHash('sha256').update(`enc:${secret}`).digest() };
  return derived.key;
}

export function encrypt(plain: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key(), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

export function decrypt(sealed: string): string {
  const [v, iv, tag, body] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('Unrecognised ciphertext');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key(), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/** One-shot hash (no Hash object per call: this runs on every authenticated request). */
export function sha256Hex(value: string): string {
  return crypto.hash('sha256', value, 'hex');
}

/** HMAC for signed URLs and similar short-lived tokens. */
export function hmac(value: string): string {
  return crypto.createHmac('sha256', `sig:${config().secretKey}`).update(value).digest('base64url');
}
