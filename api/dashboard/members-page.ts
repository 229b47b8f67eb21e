import { Router, type Request, type Response } from 'express';
import { Op } from 'sequelize';
import type { RedisClient } from '../../shared/redis/connection';
import { InviteCode, Membership, User } from '../../shared/db/models';
import { removeMember } from '../../shared/tenancy/members';
import { bumpEpoch } from '../../shared/cache/epoch';
import { createInvitation, INVITE_DAYS, invitePath } from '../../shared/tenancy/invitations';
import { recordAudit } from '../../shared/audit/audit';
import { ApiError } from '../../shared/errors/ApiError';
import { config } from '../../shared/config/env';
import { html } from '../web/html';
import type { WebKit } from '../web/session';
import { actorOf, renderOrgPage } from './org-page';
import { refuseImpersonation, requireOwner } from './member';

const ROLES = ['member', 'owner'] as const;
const roleOf = (v: unknown): 'owner' | 'member' => {
  if (v !== 'owner' && v !== 'member') throw new ApiError(400, 'invalid_request', "The role is 'owner' or 'member'.");
  return v;
};

/**
 * Members and invitations of an organization (owners only): the members with their role, a role
 * change, removal (the membership goes and the member's keys in the org stop working at once), and
 * invitations by email (a one-use link valid INVITE_DAYS days) that an owner can revoke.
 */
export function membersPage(deps: { redis: RedisClient }, kit: WebKit): Router {
  const r = Router({ mergeParams: true });
  r.use(requireOwner);
  const base = (res: Response) => `/dashboard/o/${res.locals.access!.org.slug}/members`;
  const audit = (req: Request, res: Response, path: string, targetId: string, status: number, fields: string[] = []) =>
    recordAudit({ actor: actorOf(res), method: 'POST', path: `${base(res)}${path}`, family: 'organizations', targetId, status, requestId: req.id, fields });

  const show = async (req: Request, res: Response, notice?: { text: string; error?: boolean; email?: string; link?: string }) => {
    const { org } = res.locals.access!;
    const me = res.locals.viewer!.user.id;
    const ms = await Membership.findAll({ where: { orgId: org.id } });
    const users = await User.findAll({ where: { id: ms.map((m) => m.userId) }, order: [['email', 'ASC']] });
    const invites = await InviteCode.findAll({ where: { orgId: org.id, disabled: false, uses: { [Op.lt]: InviteCode.sequelize!.col('max_uses') }, [Op.or]: [{ expiresAt: null }, { expiresAt: { [Op.gt]: new Date() } }] } as never, order: [['createdAt', 'DESC']] });
    const b = base(res);
    const link = (code: string) => `${config().publicBaseUrl}${invitePath(code)}`;
    renderOrgPage(req, res, kit, 'Members', 'members', (csrf) => html`<h1>Members</h1>
${notice ? html`<div class="card" role="${notice.error ? 'alert' : 'status'}" data-test="notice"><p${notice.error ? html` class="error"` : ''}>${notice.text}</p>${notice.link ? html`<p class="secret">${notice.link}</p>` : ''}</div>` : ''}
<div class="card"><h2>Invite someone</h2><p class="muted">The invitee opens the link, sets a password and joins with the role chosen. The link works once, for ${INVITE_DAYS} days, for that email only; send it to them yourself.</p>
<form method="post" action="${b}/invitations" class="row"><input type="hidden" name="_csrf" value="${csrf}">
<div><label for="email">Email</label><input type="email" id="email" name="email" required maxlength="320" value="${notice?.error ? (notice.email ?? '') : ''}"></div>
<div><label for="role">Role</label><select id="role" name="role">${ROLES.map((r2) => html`<option value="${r2}">${r2}</option>`)}</select></div>
<div><button type="submit">Create invitation</button></div></form></div>
<div class="card"><h2>Members</h2><table data-test="members"><thead><tr><th>Email</th><th>Role</th><th></th></tr></thead><tbody>
${users.map((u) => { const m = ms.find((x) => x.userId === u.id)!; return html`<tr data-user="${u.id}"><td data-label="Email">${u.email}${u.id === me ? html` <span class="muted">(you)</span>` : ''}</td>
<td data-label="Role"><form class="inline" method="post" action="${b}/${u.id}/role"><input type="hidden" name="_csrf" value="${csrf}"><select id="role-${u.id}" name="role" aria-label="Role of ${u.email}">${ROLES.map((r2) => html`<option value="${r2}"${r2 === m.role ? ' selected' : ''}>${r2}</option>`)}</select> <button type="submit">Change role</button></form></td>
<td><form class="inline" method="post" action="${b}/${u.id}/remove"><input type="hidden" name="_csrf" value="${csrf}"><button class="danger" type="submit">Remove</button></form></td></tr>`; })}
</tbody></table></div>
<div class="card"><h2>Open invitations</h2><table data-test="invitations"><thead><tr><th>Email</th><th>Role</th><th>Link</th><th>Expires (UTC)</th><th></th></tr></thead><tbody>
${invites.map((i) => html`<tr><td data-label="Email">${i.email ?? 'anyone with the link'}</td><td data-label="Role">${i.role}</td><td data-label="Link"><p class="secret" data-test="invite-link">${link(i.code)}</p></td><td data-label="Expires">${i.expiresAt ? i.expiresAt.toISOString().slice(0, 16).replace('T', ' ') : 'never'}</td>
<td><form class="inline" method="post" action="${b}/invitations/${i.id}/revoke"><input type="hidden" name="_csrf" value="${csrf}"><button class="danger" type="submit">Revoke</button></form></td></tr>`)}
${invites.length ? '' : html`<tr><td colspan="5" class="muted">No open invitations.</td></tr>`}</tbody></table></div>`);
  };

  r.get('/', (req, res) => show(req, res));
  r.post('/invitations', refuseImpersonation, async (req, res) => {
    const email = String(req.body?.email ?? '').trim().toLowerCase().slice(0, 320);
    const role = roleOf(req.body?.role ?? 'member');
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
      res.status(400);
      return show(req, res, { text: 'Enter a valid email address to invite.', error: true, email });
    }
    const inv = await createInvitation(res.locals.access!.org.id, email, role);
    await audit(req, res, '/invitations', inv.id, 201, [`role:${role}`]);
    res.status(201);
    await show(req, res, { text: `Invitation created for ${email}. Send them this link (one use, ${INVITE_DAYS} days):`, link: `${config().publicBaseUrl}${invitePath(inv.code)}` });
  });
  r.post('/invitations/:id/revoke', refuseImpersonation, async (req, res) => {
    const id = String(req.params.id);
    const [n] = /^[0-9a-f-]{36}$/.test(id) ? await InviteCode.update({ disabled: true }, { where: { id, orgId: res.locals.access!.org.id } }) : [0];
    if (!n) throw new ApiError(404, 'not_found', 'No such invitation in this organization.');
    await audit(req, res, `/invitations/${id}/revoke`, id, 200);
    res.redirect(303, base(res));
  });

  /** The member of this org named in the path (404 otherwise), refusing to leave the org without an owner. */
  const memberOf = async (res: Response, userId: string, nextRole: 'owner' | 'member' | null) => {
    const orgId = res.locals.access!.org.id;
    const m = /^[0-9a-f-]{36}$/.test(userId) ? await Membership.findOne({ where: { orgId, userId } }) : null;
    if (!m) throw new ApiError(404, 'not_found', 'No such member in this organization.');
    if (m.role === 'owner' && nextRole !== 'owner' && (await Membership.count({ where: { orgId, role: 'owner' } })) <= 1) {
      throw new ApiError(409, 'last_owner', 'An organization keeps at least one owner: make someone else an owner first.');
    }
    return m;
  };
  r.post('/:userId/role', refuseImpersonation, async (req, res) => {
    const role = roleOf(req.body?.role);
    const m = await memberOf(res, String(req.params.userId), role);
    await m.update({ role });
    await bumpEpoch(deps.redis);
    await audit(req, res, `/${m.userId}/role`, m.userId, 200, [`role:${role}`]);
    res.redirect(303, base(res));
  });
  r.post('/:userId/remove', refuseImpersonation, async (req, res) => {
    const m = await memberOf(res, String(req.params.userId), null);
    const { revokedKeys } = await removeMember(deps.redis, m.orgId, m.userId);
    await audit(req, res, `/${m.userId}/remove`, m.userId, 200, [`revoked_keys:${revokedKeys}`]);
    res.redirect(303, base(res));
  });
  return r;
}
