import crypto from 'crypto';
import type { RedisClient } from '../redis/connection';
import { config } from '../config/env';
import { sha256Hex } from '../crypto';

/** A ticket is good for one use within a minute; the session it opens lasts IMPERSONATION_MINUTES. */
const TICKET_TTL_SECONDS = 60;
export const IMPERSONATION_MINUTES = 15;

export interface Impersonation {
  userId: string;
  adminId: string;
  adminEmail: string;
}

const keyOf = (ticket: string) => `${config().redisPrefix}:web:impersonation:${sha256Hex(ticket)}`;

/** A one-use ticket that opens `userId`'s dashboard as the admin (`/dashboard/impersonate?ticket=`). */
export async function createImpersonationTicket(redis: RedisClient, who: Impersonation): Promise<string> {
  const ticket = crypto.randomBytes(24).toString('base64url');
  await redis.set(keyOf(ticket), JSON.stringify(who), 'EX', TICKET_TTL_SECONDS);
  return ticket;
}

export async function consumeImpersonationTicket(redis: RedisClient, ticket: string): Promise<Impersonation | null> {
  const raw = await redis.getdel(keyOf(ticket));
  return raw ? (JSON.parse(raw) as Impersonation) : null;
}

/** The dashboard URL a ticket opens, on the web process (PUBLIC_BASE_URL, else `fallbackBase`). */
export const impersonationUrl = (ticket: string, fallbackBase: string) =>
  `${config().publicBaseUrl ?? fallbackBase}/dashboard/impersonate?ticket=${encodeURIComponent(ticket)}`;
