import type { Router, Request, Response } from 'express';
import type { RedisClient } from '../../../shared/redis/connection';
import { Organization, Plan, User } from '../../../shared/db/models';
import { createOrg, findOrg, slugify } from '../../../shared/tenancy/ops';
import { createInvitation, invitePath } from '../../../shared/tenancy/invitations';
import { createPasswordLink, passwordLinkPath } from '../../../shared/web/password-links';
import { userByEmail } from '../../../shared/web/sign-in-user';
import { recordAudit } from '../../../shared/audit/audit';
import { ApiError } from '../../../shared/errors/ApiError';
import { config } from '../../../shared/config/env';
import { html, type Html } from '../../web/html';
import { operatorActor } from './auth';

type Render = (req: Request, res: Response, tab: string, body: (csrf: string) => Html) => void;

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const emailOf = (v: unknown) => {
  const e = String(v ?? '').trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 320) throw new ApiError(400, 'invalid_request', 'Enter a valid email address.');
  return e;
};

/**
 * `GET /create`: the operator creates an organization (name, slug, plan), a user (who gets a 7-day
 * link to choose a password) or an invitation into an organization with a role (the link of
 * `/dashboard/invite/{code}`, as an owner's members page makes). Each write is audited.
 */
export function createPage(r: Router, redis: RedisClient, render: Render): void {
  const audit = (req: Request, res: Response, path: string, targetId: string, fields: string[] = []) =>
    recordAudit({ actor: operatorActor(res), method: 'POST', path, family: 'console', targetId, status: 201, requestId: req.id, fields });
  const show = async (req: Request, res: Response, done?: { text: string; link?: string }) => {
    const [plans, orgs] = await Promise.all([Plan.findAll({ order: [['name', 'ASC']] }), Organization.findAll({ order: [['name', 'ASC']], limit: 500 })]);
    render(req, res, '/create', (csrf) => html`<h1>Create</h1>
${done ? html`<div class="card" role="status" data-test="created"><p>${done.text}</p>${done.link ? html`<p class="secret" data-test="link">${done.link}</p>` : ''}</div>` : ''}
<div class="card"><h2>Organization</h2><form method="post" action="/create/org" class="row"><input type="hidden" name="_csrf" value="${csrf}">
<div><label for="oname">Name</label><input type="text" id="oname" name="name" required maxlength="200"></div>
<div><label for="oslug">Slug</label><input type="text" id="oslug" name="slug" maxlength="60" pattern="[a-z0-9][a-z0-9-]*" placeholder="from the name"></div>
<div><label for="oplan">Plan</label><select id="oplan" name="plan"><option value="">—</option>${plans.map((p) => html`<option value="${p.name}">${p.name}</option>`)}</select></div>
<div><button type="submit">Create organization</button></div></form></div>
<div class="card"><h2>User</h2><p class="muted">The user gets a one-use link (7 days) to choose a password; add them to an organization with an invitation, or with <code>gateway member add</code>.</p>
<form method="post" action="/create/user" class="row"><input type="hidden" name="_csrf" value="${csrf}">
<div><label for="uemail">Email</label><input type="email" id="uemail" name="email" required maxlength="320"></div>
<div><label for="uname">Name</label><input type="text" id="uname" name="name" maxlength="200"></div>
<div><button type="submit">Create user</button></div></form></div>
<div class="card"><h2>Invitation</h2><p class="muted">One use, 7 days, for that email: the invitee sets a password and joins with the role.</p>
<form method="post" action="/create/invitation" class="row"><input type="hidden" name="_csrf" value="${csrf}">
<div><label for="iorg">Organization</label><select id="iorg" name="org" required>${orgs.map((o) => html`<option value="${o.slug}">${o.name} (${o.slug})</option>`)}</select></div>
<div><label for="iemail">Email</label><input type="email" id="iemail" name="email" required maxlength="320"></div>
<div><label for="irole">Role</label><select id="irole" name="role"><option value="member">member</option><option value="owner">owner</option></select></div>
<div><button type="submit">Create invitation</button></div></form></div>`);
  };
  r.get('/create', (req, res) => show(req, res));

  r.post('/create/org', async (req, res) => {
    const name = String(req.body?.name ?? '').trim().slice(0, 200);
    if (!name) throw new ApiError(400, 'invalid_request', 'An organization needs a name.');
    const slug = slugify(String(req.body?.slug ?? '') || name);
    if (!slug) throw new ApiError(400, 'invalid_request', 'The slug needs at least one letter or digit.');
    if (await findOrg(slug)) throw new ApiError(409, 'organization_exists', `An organization with slug '${slug}' already exists.`);
    const plan = String(req.body?.plan ?? '');
    if (plan && !(await Plan.findOne({ where: { name: plan } }))) throw new ApiError(400, 'invalid_reference', `No plan '${plan}'.`);
    const org = await createOrg(redis, { name, slug, plan: plan || undefined });
    await audit(req, res, '/admin/v1/organizations', org.id, ['name', 'slug', ...(plan ? ['plan_id'] : [])]);
    res.status(201);
    await show(req, res, { text: `Organization ${org.name} (${org.slug}) created.` });
  });

  r.post('/create/user', async (req, res) => {
    const email = emailOf(req.body?.email);
    if (await userByEmail(email)) throw new ApiError(409, 'user_exists', `A user with email ${email} already exists.`);
    const user = await User.create({ email, name: String(req.body?.name ?? '').trim().slice(0, 200) || null });
    const token = await createPasswordLink(redis, user.id, 'invite');
    await audit(req, res, '/admin/v1/users', user.id, ['email', 'password_link']);
    res.status(201);
    await show(req, res, { text: `User ${email} created. Send them this link to choose a password (one use, 7 days):`, link: `${config().publicBaseUrl}${passwordLinkPath(token)}` });
  });

  r.post('/create/invitation', async (req, res) => {
    const org = await findOrg(String(req.body?.org ?? ''));
    if (!org) throw new ApiError(400, 'invalid_reference', 'No such organization.');
    const email = emailOf(req.body?.email);
    const role = req.body?.role === 'owner' ? 'owner' : req.body?.role === undefined || req.body?.role === 'member' ? 'member' : null;
    if (!role) throw new ApiError(400, 'invalid_request', "The role is 'owner' or 'member'.");
    const inv = await createInvitation(org.id, email, role);
    await audit(req, res, '/admin/v1/invite-codes', inv.id, [`org:${org.id}`, `role:${role}`]);
    res.status(201);
    await show(req, res, { text: `Invitation into ${org.name} as ${role} for ${email}. Send them this link (one use, 7 days):`, link: `${config().publicBaseUrl}${invitePath(inv.code)}` });
  });
}
