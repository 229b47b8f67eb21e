import crypto from 'crypto';
import type { Request } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import { keys } from '../../shared/redis/keys';
import { html, type Html } from './html';
import { pageAreaOf } from './error-page';
import { ApiError } from '../../shared/errors/ApiError';

/** How long a sent form's token is remembered: longer than a tab stays open before it is reloaded. */
const REMEMBERED_S = 24 * 3600;
const TOKEN = /^[A-Za-z0-9_-]{22}$/;

/**
 * A form whose action must not be taken twice (it makes a key and shows its secret once: create,
 * rotate) carries a one-time token of the page that drew it. Reloading the page that answered the
 * POST sends the same form again; `once` tells it apart, so the reload makes no second key.
 */
export const onceField = (): Html => html`<input type="hidden" name="_once" value="${crypto.randomBytes(16).toString('base64url')}">`;

/** The opening of what a page says when a reload sent its form again; what was not done again follows. */
export const RESENT = 'This form was already sent (the page was reloaded): ';

/** The card of a page answering a form sent again (409): RESENT, then `what` was not done again. */
export const resentNotice = (what: Html | string): Html => html`<div class="card" role="status" data-test="resent"><p>${RESENT}${what}</p></div>`;

/** The form's one-time token, when it sent a well-formed one (a script posting the form may not). */
function tokenOf(req: Request): string | undefined {
  const token = (req.body as Record<string, unknown> | undefined)?._once;
  return typeof token === 'string' && TOKEN.test(token) ? token : undefined;
}

/**
 * Runs `act` once per form token: a form sent again runs `resent` instead (its token is remembered a
 * day), or, for a client that does not prefer HTML, is refused 409 `form_resent`. When `act` throws, the token is forgotten (nothing was made) and the error goes on. A request
 * without a token always acts.
 */
export async function once(redis: RedisClient, req: Request, act: () => Promise<void>, resent: () => Promise<void>): Promise<void> {
  const token = tokenOf(req);
  if (token && (await redis.set(keys.formSent(token), '1', 'EX', REMEMBERED_S, 'NX')) !== 'OK') {
    // a browser gets the page with its notice; a JSON client the envelope, as for every other refusal
    if (!req.res || !pageAreaOf(req, req.res)) throw new ApiError(409, 'form_resent', `${RESENT}nothing was made or changed again.`);
    return resent();
  }
  try {
    await act();
  } catch (err) {
    if (token) await redis.del(keys.formSent(token));
    throw err;
  }
}
