import crypto from 'crypto';
import type { RedisClient } from '../redis/connection';
import { config } from '../config/env';
import { sha256Hex } from '../crypto';

/**
 * One-use links that let a user choose a password: an invite (7 days) or a reset printed by the CLI
 * (1 hour). Redis keeps only the token's hash, pointing at the user id; using it deletes it.
 */
export const LINK_TTL_SECONDS = { invite: 7 * 86_400, reset: 3_600 } as const;
export type LinkKind = keyof typeof LINK_TTL_SECONDS;

const keyOf = (token: string) => `${config().redisPrefix}:web:password-link:${sha256Hex(token)}`;

export async function createPasswordLink(redis: RedisClient, userId: string, kind: LinkKind): Promise<string> {
  const token = crypto.randomBytes(24).toString('base64url');
  await redis.set(keyOf(token), userId, 'EX', LINK_TTL_SECONDS[kind]);
  return token;
}

/** The user id a live token points at, without using it up (the form page). */
export function peekPasswordLink(redis: RedisClient, token: string): Promise<string | null> {
  return redis.get(keyOf(token));
}

/** Uses a token up: the user id, or null when unknown, expired or already used. */
export function consumePasswordLink(redis: RedisClient, token: string): Promise<string | null> {
  return redis.getdel(keyOf(token));
}

/** The page a link opens: `{base}/dashboard/password/{token}`. */
export const passwordLinkPath = (token: string) => `/dashboard/password/${token}`;
