import { Router } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import { User } from '../../shared/db/models';
import { recordAudit } from '../../shared/audit/audit';
import { verifyPassword, setPassword, assertPasswordAcceptable, WeakPasswordError, MIN_PASSWORD_LENGTH } from '../../shared/web/passwords';
import { consumePasswordLink, peekPasswordLink } from '../../shared/web/password-links';
import { consumeImpersonationTicket, IMPERSONATION_MINUTES } from '../../shared/web/impersonation';
import { ApiError } from '../../shared/errors/ApiError';
import { userByEmail } from '../../shared/web/sign-in-user';
import { html } from '../web/html';
import { page, signInForm } from '../web/layout';
import { signIn, signOut, type WebKit } from '../web/session';
import { signInLimit } from '../web/sign-in-limit';
import { refuseOnPage, wrongSignIn } from '../web/page-refusal';

const BRAND = 'Gateway dashboard';
const chrome = (title: string) => ({ title, base: '/dashboard', brand: BRAND });

/** Sign-in, sign-out, password links and impersonation entry of the dashboard. */
export function dashboardAuthRoutes(redis: RedisClient, kit: WebKit): Router {
  const r = Router();
  r.get('/sign-in', (req, res) => {
    res.send(page(chrome('Sign in'), signInForm({ action: '/dashboard/sign-in', csrf: kit.csrfToken(req, res), heading: 'Sign in to your organization' })));
  });
  r.post('/sign-in', ...signInLimit(redis, 'dashboard'), async (req, res) => {
    const email = String(req.body?.email ?? '').trim().toLowerCase();
    const user = await userByEmail(email);
    if (!(await verifyPassword(String(req.body?.password ?? ''), user?.passwordHash ?? null)) || !user) {
      return refuseOnPage(req, res, wrongSignIn(), (error) => page(chrome('Sign in'), signInForm({ action: '/dashboard/sign-in', csrf: kit.csrfToken(req, res), heading: 'Sign in to your organization', error, email })));
    }
    await signIn(req, user);
    res.redirect(303, '/dashboard');
  });
  r.post('/sign-out', async (req, res) => {
    await signOut(req);
    res.redirect(303, '/dashboard/sign-in');
  });

  const passwordForm = (token: string, csrf: string, error?: string) =>
    html`<div class="signin card"><h1>Choose a password</h1>${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/dashboard/password/${token}"><input type="hidden" name="_csrf" value="${csrf}">
<label for="password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label><input type="password" id="password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
<p><button type="submit">Set password</button></p></form></div>`;
  r.get('/password/:token', async (req, res) => {
    if (!(await peekPasswordLink(redis, req.params.token))) throw new ApiError(404, 'invalid_password_link', 'This link is unknown, used or expired; ask an operator for a new one.');
    res.send(page(chrome('Choose a password'), passwordForm(req.params.token, kit.csrfToken(req, res))));
  });
  r.post('/password/:token', async (req, res) => {
    if (req.session.impersonatedBy) throw new ApiError(403, 'impersonation_forbidden', 'An impersonation session cannot change passwords.');
    const password = String(req.body?.password ?? '');
    const unknown = () => new ApiError(404, 'invalid_password_link', 'This link is unknown, used or expired; ask an operator for a new one.');
    const peeked = await peekPasswordLink(redis, req.params.token);
    if (!peeked || !(await User.findOne({ where: { id: peeked, deletedAt: null } }))) throw unknown();
    try {
      assertPasswordAcceptable(password); // a weak password leaves the link usable for another try
    } catch (err) {
      if (!(err instanceof WeakPasswordError)) throw err;
      return refuseOnPage(req, res, new ApiError(400, 'invalid_request', err.message, { param: 'password' }), (error) => page(chrome('Choose a password'), passwordForm(req.params.token, kit.csrfToken(req, res), error)));
    }
    // used up before the password is set, atomically: of two submissions at once only one sets it
    const userId = await consumePasswordLink(redis, req.params.token);
    const user = userId ? await User.findOne({ where: { id: userId, deletedAt: null } }) : null;
    if (!user) throw unknown();
    await setPassword(user, password);
    await recordAudit({ actor: { type: 'web_session', id: user.id, label: user.email }, method: 'POST', path: '/dashboard/password', family: 'users', targetId: user.id, status: 200 });
    await signIn(req, user);
    res.redirect(303, '/dashboard');
  });

  r.get('/impersonate', async (req, res) => {
    const who = await consumeImpersonationTicket(redis, String(req.query.ticket ?? ''));
    const user = who ? await User.findOne({ where: { id: who.userId, deletedAt: null } }) : null;
    if (!who || !user) throw new ApiError(404, 'invalid_impersonation_ticket', 'This impersonation link is unknown, used or expired.');
    await signIn(req, user, { impersonatedBy: { adminId: who.adminId, adminEmail: who.adminEmail, until: Date.now() + IMPERSONATION_MINUTES * 60_000 } });
    req.session.cookie.maxAge = IMPERSONATION_MINUTES * 60_000;
    await recordAudit({ actor: { type: 'web_session', id: who.adminId, label: `${who.adminEmail} as ${user.email}` }, method: 'GET', path: '/dashboard/impersonate', family: 'users', targetId: user.id, status: 200, fields: ['impersonation_started'] });
    res.redirect(303, '/dashboard');
  });
  return r;
}
