import crypto from 'crypto';
import type { Request } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import { keys } from '../../shared/redis/keys';
import { html, type Html } from './html';

/** How long a sent form's token is remembered: longer than a tab stays open before it is reloaded. */
const REMEMBERED_S = 24 * 3600;
const TOKEN = /^[A-Za-z0-9_-]{22}$/;

/**
 * A form whose action must not be taken twice (it makes a key and shows its secret once: create,
 * rotate) carries a one-time token of the page that drew it. Reloading the page that answered the
 * POST sends the same form again; `firstSending` tells it apart, so the reload makes no second key.
 */
export const onceField = (): Html => html`<input type="hidden" name="_once" value="${crypto.randomBytes(16).toString('base64url')}">`;

/**
 * Whether this is the first time the form's token was sent (it is then remembered). A request
 * without a token (a script posting the form) is always a first sending.
 */
export async function firstSending(redis: RedisClient, req: Request): Promise<boolean> {
  const token = (req.body as Record<string, unknown> | undefined)?._once;
  if (typeof token !== 'string' || !TOKEN.test(token)) return true;
  return (await redis.set(keys.formSent(token), '1', 'EX', REMEMBERED_S, 'NX')) === 'OK';
}

/** Forgets the form's token when its action failed, so sending the form again can still act. */
export async function forgetSending(redis: RedisClient, req: Request): Promise<void> {
  const token = (req.body as Record<string, unknown> | undefined)?._once;
  if (typeof token === 'string' && TOKEN.test(token)) await redis.del(keys.formSent(token));
}

/**
 * Runs `act` once per form token: a form sent again runs `resent` instead. When `act` throws, the
 * token is forgotten (nothing was made) and the error goes on.
 */
export async function once(redis: RedisClient, req: Request, act: () => Promise<void>, resent: () => Promise<void>): Promise<void> {
  if (!(await firstSending(redis, req))) return resent();
  try {
    await act();
  } catch (err) {
    await forgetSending(redis, req);
    throw err;
  }
}
