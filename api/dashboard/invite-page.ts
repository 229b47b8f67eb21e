import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { InviteCode, Organization } from '../../shared/db/models';
import { recordAudit } from '../../shared/audit/audit';
import { ApiError } from '../../shared/errors/ApiError';
import { InvitationFormError, openInvitation, redeemInvitation } from '../../shared/tenancy/invitations';
import { MIN_PASSWORD_LENGTH } from '../../shared/web/passwords';
import { html } from '../web/html';
import { page } from '../web/layout';
import { signIn, type WebKit } from '../web/session';
import { signInLimit } from '../web/sign-in-limit';
import { refuseOnPage } from '../web/page-refusal';
import type { RedisClient } from '../../shared/redis/connection';

const chrome = (title: string) => ({ title, base: '/dashboard', brand: 'Gateway dashboard' });

/**
 * `/dashboard/invite/{code}`: the invitee sets a password (or, with an account already, enters theirs)
 * and joins the organization with the invitation's role. A revoked, expired, used-up or unknown
 * invitation answers a page that says which (404 or 410), before and after the form.
 */
export function invitePage(kit: WebKit, redis: RedisClient): Router {
  const r = Router();
  const form = (req: Request, res: Response, invite: InviteCode, org: Organization, typed: { email?: string; error?: string } = {}) =>
    page(chrome(`Join ${org.name}`), html`<div class="signin card"><h1>Join ${org.name}</h1>
<p>You are invited as <strong data-test="invite-role">${invite.role}</strong>. Choose a password (at least ${MIN_PASSWORD_LENGTH} characters); if this email already has an account, enter its password.</p>
<form method="post" action="/dashboard/invite/${invite.code}"><input type="hidden" name="_csrf" value="${kit.csrfToken(req, res)}">
<label for="email">Email</label><input type="email" id="email" name="email" autocomplete="email" required maxlength="320" value="${invite.email ?? typed.email ?? ''}"${invite.email ? ' readonly' : ''}>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="password-error">
${typed.error ? html`<p class="error" role="alert" id="password-error">${typed.error}</p>` : ''}
<p><button type="submit">Join ${org.name}</button></p></form></div>`);

  r.get('/invite/:code', async (req, res) => {
    const { invite, org } = await openInvitation(String(req.params.code));
    res.send(form(req, res, invite, org));
  });
  // A redemption by an existing account checks its password: the dashboard sign-in's failure limits
  // (the same counters) apply, or an open invitation would be a password-guessing path around them.
  // An invitation that names an email checks that account whatever the form typed: the limits count it.
  const invitedEmail: RequestHandler = async (req, _res, next) => {
    const named = (await openInvitation(String(req.params.code)).catch(() => undefined))?.invite.email;
    if (named && req.body) req.body.email = named;
    next();
  };
  r.post('/invite/:code', invitedEmail, ...signInLimit(redis, 'dashboard', (res) => res.locals.wrongPassword === true), async (req, res) => {
    if (req.session.impersonatedBy) throw new ApiError(403, 'impersonation_forbidden', 'An impersonation session cannot redeem invitations.');
    const code = String(req.params.code);
    const email = String(req.body?.email ?? '').slice(0, 320);
    try {
      const { user, org, role, inviteId } = await redeemInvitation(code, email, String(req.body?.password ?? ''));
      // the invitation's id, never its code: audit-logs:read would hand a code with uses left to its reader
      await recordAudit({ actor: { type: 'web_session', id: user.id, label: user.email }, method: 'POST', path: '/dashboard/invite', family: 'invite-codes', targetId: inviteId, status: 200, fields: [`org:${org.id}`, `role:${role}`] });
      await signIn(req, user);
      res.redirect(303, `/dashboard/o/${org.slug}`);
    } catch (err) {
      if (!(err instanceof InvitationFormError)) throw err;
      if (err.wrongPassword) res.locals.wrongPassword = true;
      const { invite, org } = await openInvitation(code);
      refuseOnPage(req, res, new ApiError(400, 'invalid_request', err.message, err.wrongPassword ? { param: 'password' } : {}), (error) => form(req, res, invite, org, { email, error }));
    }
  });
  return r;
}
