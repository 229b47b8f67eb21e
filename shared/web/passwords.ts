import crypto from 'crypto';
import { promisify } from 'util';
import type { User } from '../db/models';

const scrypt = promisify(crypto.scrypt) as (pw: string, salt: Buffer, len: number, opts: crypto.ScryptOptions) => Promise<Buffer>;

/** scrypt parameters (N=2^15, r=8, p=1: about 32 MiB and ~50 ms), stored with each hash so they can grow. */
const PARAMS = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LEN = 32;
export const MIN_PASSWORD_LENGTH = 10;

/** `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password.normalize('NFKC'), salt, KEY_LEN, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? '').split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    // no password: spend the same time, so an attacker cannot tell which emails have one
    await scrypt(password, crypto.randomBytes(16), KEY_LEN, PARAMS);
    return false;
  }
  const [, N, r, p, salt, hash] = parts;
  const want = Buffer.from(hash, 'base64url');
  const got = await scrypt(password.normalize('NFKC'), Buffer.from(salt, 'base64url'), want.length, { N: Number(N), r: Number(r), p: Number(p), maxmem: PARAMS.maxmem });
  return crypto.timingSafeEqual(got, want);
}

export class WeakPasswordError extends Error {}

/** Refuses (WeakPasswordError) a password shorter than MIN_PASSWORD_LENGTH or longer than 1024 characters. */
export function assertPasswordAcceptable(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new WeakPasswordError(`A password needs at least ${MIN_PASSWORD_LENGTH} characters.`);
  if (password.length > 1024) throw new WeakPasswordError('A password is at most 1024 characters.');
}

/** Sets a user's password (at least MIN_PASSWORD_LENGTH characters). */
export async function setPassword(user: User, password: string): Promise<void> {
  assertPasswordAcceptable(password);
  await user.update({ passwordHash: await hashPassword(password) });
}
