import type { Router, Request, Response } from 'express';
import type { RedisClient } from '../../../shared/redis/connection';
import { Organization, Plan, User } from '../../../shared/db/models';
import { createOrg, findOrg, slugify } from '../../../shared/tenancy/ops';
import { createInvitation } from '../../../shared/tenancy/invitations';
import { mailInvitation } from '../../web/invitation-notice';
import { createPasswordLink, passwordLinkPath } from '../../../shared/web/password-links';
import { userByEmail } from '../../../shared/web/sign-in-user';
import { recordAudit } from '../../../shared/audit/audit';
import { ApiError } from '../../../shared/errors/ApiError';
import { config } from '../../../shared/config/env';
import { html, type Html } from '../../web/html';
import { operatorActor } from './auth';
import { fieldError, formOf, invalidAttrs, typed, withFormRefusal, type FormState } from '../../web/form-refusal';
import { once, onceField, RESENT } from '../../web/once';

type Render = (req: Request, res: Response, tab: string, body: (csrf: string) => Html) => void;

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const emailOf = (v: unknown) => {
  const e = String(v ?? '').trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 320) throw new ApiError(400, 'invalid_request', 'Enter a valid email address.', { param: 'email' });
  return e;
};

/**
 * `GET /create`: the operator creates an organization (name, slug, plan), a user (who gets a 7-day
 * link to choose a password) or an invitation into an organization with a role (mailed when SMTP_URL
 * is set, else the link of `/dashboard/invite/{code}` is shown, as on an owner's members page). Each write is audited. A refused
 * form comes back with what was typed and the message next to its field (api/web/form-refusal.ts).
 * Each form carries a one-time token (api/web/once.ts): reloading the page that answered it creates,
 * and mails, nothing a second time.
 */
export function createPage(r: Router, redis: RedisClient, render: Render): void {
  const audit = (req: Request, res: Response, path: string, targetId: string, fields: string[] = []) =>
    recordAudit({ actor: operatorActor(res), method: 'POST', path, family: 'console', targetId, status: 201, requestId: req.id, fields });
  const show = async (req: Request, res: Response, done?: { text: string; link?: string }, refusal?: FormState) => {
    const [plans, orgs] = await Promise.all([Plan.findAll({ order: [['name', 'ASC']] }), Organization.findAll({ order: [['name', 'ASC']], limit: 500 })]);
    const [of, uf, inf] = [formOf(refusal, 'org'), formOf(refusal, 'user'), formOf(refusal, 'invitation')];
    /** A text field of a form: what was typed when it was refused, and the message after it. */
    const field = (st: FormState | undefined, id: string, name: string, label: string, attrs: Html) =>
      html`<div><label for="${id}">${label}</label><input id="${id}" name="${name}" ${attrs} value="${typed(st, name)}"${invalidAttrs(st, name)}>${fieldError(st, name)}</div>`;
    const options = (st: FormState | undefined, name: string, list: Array<[string, string]>) => list.map(([v, label]) => html`<option value="${v}"${typed(st, name) === v ? html` selected` : ''}>${label}</option>`);
    render(req, res, '/create', (csrf) => html`<h1>Create</h1>
${done ? html`<div class="card" role="status" data-test="created"><p>${done.text}</p>${done.link ? html`<p class="secret" data-test="link">${done.link}</p>` : ''}</div>` : ''}
<div class="card"><h2>Organization</h2><form method="post" action="/create/org" class="row"><input type="hidden" name="_csrf" value="${csrf}">${onceField()}
${field(of, 'oname', 'name', 'Name', html`type="text" required maxlength="200"`)}
${field(of, 'oslug', 'slug', 'Slug', html`type="text" maxlength="60" pattern="[a-z0-9][a-z0-9-]*" placeholder="from the name"`)}
<div><label for="oplan">Plan</label><select id="oplan" name="plan"${invalidAttrs(of, 'plan')}><option value="">—</option>${options(of, 'plan', plans.map((p) => [p.name, p.name]))}</select>${fieldError(of, 'plan')}</div>
<div><button type="submit">Create organization</button></div></form></div>
<div class="card"><h2>User</h2><p class="muted">The user gets a one-use link (7 days) to choose a password; add them to an organization with an invitation, or with <code>gateway member add</code>.</p>
<form method="post" action="/create/user" class="row"><input type="hidden" name="_csrf" value="${csrf}">${onceField()}
${field(uf, 'uemail', 'email', 'Email', html`type="email" required maxlength="320"`)}
${field(uf, 'uname', 'name', 'Name', html`type="text" maxlength="200"`)}
<div><button type="submit">Create user</button></div></form></div>
<div class="card"><h2>Invitation</h2><p class="muted">One use, 7 days, for that email: the invitee sets a password and joins with the role.</p>
<form method="post" action="/create/invitation" class="row"><input type="hidden" name="_csrf" value="${csrf}">${onceField()}
<div><label for="iorg">Organization</label><select id="iorg" name="org" required${invalidAttrs(inf, 'org')}>${options(inf, 'org', orgs.map((o) => [o.slug, `${o.name} (${o.slug})`]))}</select>${fieldError(inf, 'org')}</div>
${field(inf, 'iemail', 'email', 'Email', html`type="email" required maxlength="320"`)}
<div><label for="irole">Role</label><select id="irole" name="role"${invalidAttrs(inf, 'role')}>${options(inf, 'role', [['member', 'member'], ['owner', 'owner']])}</select>${fieldError(inf, 'role')}</div>
<div><button type="submit">Create invitation</button></div></form></div>`);
  };
  r.get('/create', (req, res) => show(req, res));

  const again = (req: Request, res: Response) => (state: FormState) => show(req, res, undefined, state);
  // the form sent again by a reload of the page that answered it: 409, nothing made
  const resent = (req: Request, res: Response, what: string) => () =>
    show(req, res.status(409), { text: `${RESENT}no other ${what} was made${what === 'invitation' ? ' or mailed' : ''}. The one it made is in place; a link it showed was shown once.` });

  r.post('/create/org', (req, res) => withFormRefusal(req, res, async () => {
    const name = String(req.body?.name ?? '').trim().slice(0, 200);
    if (!name) throw new ApiError(400, 'invalid_request', 'An organization needs a name.', { param: 'name' });
    const slugField = req.body?.slug ? 'slug' : 'name';
    const slug = slugify(String(req.body?.slug ?? '') || name);
    if (!slug) throw new ApiError(400, 'invalid_request', 'The slug needs at least one letter or digit.', { param: slugField });
    const plan = String(req.body?.plan ?? '');
    if (plan && !(await Plan.findOne({ where: { name: plan } }))) throw new ApiError(400, 'invalid_reference', `No plan '${plan}'.`, { param: 'plan' });
    // the slug taken is checked once the form is known not to be a reload (which took it itself)
    await once(redis, req, async () => {
      if (await findOrg(slug)) throw new ApiError(409, 'organization_exists', `An organization with slug '${slug}' already exists.`, { param: slugField });
      const org = await createOrg(redis, { name, slug, plan: plan || undefined });
      await audit(req, res, '/admin/v1/organizations', org.id, ['name', 'slug', ...(plan ? ['plan_id'] : [])]);
      res.status(201);
      await show(req, res, { text: `Organization ${org.name} (${org.slug}) created.` });
    }, resent(req, res, 'organization'));
  }, again(req, res), { form: 'org' }));

  r.post('/create/user', (req, res) => withFormRefusal(req, res, async () => {
    const email = emailOf(req.body?.email);
    await once(redis, req, async () => { // as the organization's slug, the email taken is checked after the reload's token
      if (await userByEmail(email)) throw new ApiError(409, 'user_exists', `A user with email ${email} already exists.`, { param: 'email' });
      const user = await User.create({ email, name: String(req.body?.name ?? '').trim().slice(0, 200) || null });
      const token = await createPasswordLink(redis, user.id, 'invite');
      await audit(req, res, '/admin/v1/users', user.id, ['email', 'password_link']);
      res.status(201);
      await show(req, res, { text: `User ${email} created. Send them this link to choose a password (one use, 7 days):`, link: `${config().publicBaseUrl}${passwordLinkPath(token)}` });
    }, resent(req, res, 'user'));
  }, again(req, res), { form: 'user' }));

  r.post('/create/invitation', (req, res) => withFormRefusal(req, res, async () => {
    const org = await findOrg(String(req.body?.org ?? ''));
    if (!org) throw new ApiError(400, 'invalid_reference', 'No such organization.', { param: 'org' });
    const email = emailOf(req.body?.email);
    const role = req.body?.role === 'owner' ? 'owner' : req.body?.role === undefined || req.body?.role === 'member' ? 'member' : null;
    if (!role) throw new ApiError(400, 'invalid_request', "The role is 'owner' or 'member'.", { param: 'role' });
    await once(redis, req, async () => {
      const inv = await createInvitation(org.id, email, role);
      const notice = await mailInvitation(inv, org.name, 'An operator');
      await audit(req, res, '/admin/v1/invite-codes', inv.id, [`org:${org.id}`, `role:${role}`, `mail:${notice.outcome}`]);
      res.status(201);
      await show(req, res, notice);
    }, resent(req, res, 'invitation'));
  }, again(req, res), { form: 'invitation' }));
}
