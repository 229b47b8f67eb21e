import { Router, type Request, type Response } from 'express';
import { Op } from 'sequelize';
import type { RedisClient } from '../../shared/redis/connection';
import { InviteCode, Membership, User } from '../../shared/db/models';
import { changeMemberKeepingAnOwner, removeMember, updateMemberLimits } from '../../shared/tenancy/members';
import { memberBudget, memberLimitsCell } from './member-limits';
import { memberLimitsFromForm } from './key-controls-form';
import { bumpEpoch } from '../../shared/cache/epoch';
import { countInWindow } from '../../shared/redis/window-count';
import { keys } from '../../shared/redis/keys';
import { createInvitation, INVITE_DAYS, invitePath } from '../../shared/tenancy/invitations';
import { recordAudit } from '../../shared/audit/audit';
import { ApiError } from '../../shared/errors/ApiError';
import { config } from '../../shared/config/env';
import { html } from '../web/html';
import type { WebKit } from '../web/session';
import { actorOf, renderOrgPage } from './org-page';
import { refuseImpersonation, requireOwner } from './member';
import { fieldError, formOf, invalidAttrs, savedNotice, typed, withFormRefusal, type FormState } from '../web/form-refusal';
import { mailInvitation } from '../web/invitation-notice';
import { once, onceField, RESENT } from '../web/once';
import { confirmedAction } from '../web/confirm';
import { utcText } from '../web/format';

const ROLES = ['member', 'owner'] as const;
const roleOf = (v: unknown): 'owner' | 'member' => {
  if (v !== 'owner' && v !== 'member') throw new ApiError(400, 'invalid_request', "The role is 'owner' or 'member'.", { param: 'role' });
  return v;
};

/** What a save on this page says (`?saved=`). */
const SAVED: Record<string, string> = { limits: "Member's limits saved; they apply to all their keys from the next request.", role: 'Role changed.', removed: 'Member removed; their keys in this organization no longer work.', revoked: 'Invitation revoked.' };

/**
 * Members and invitations of an organization (owners only): the members with their role, a role
 * change, removal (the membership goes and the member's keys in the org stop working at once), and
 * invitations by email (a one-use link valid INVITE_DAYS days, mailed when SMTP_URL is set, else
 * shown to send) that an owner can revoke. A refused form (invitation, role change) comes back with
 * what was chosen and the message next to its field.
 */
export function membersPage(deps: { redis: RedisClient }, kit: WebKit): Router {
  const r = Router({ mergeParams: true });
  r.use(requireOwner);
  const base = (res: Response) => `/dashboard/o/${res.locals.access!.org.slug}/members`;
  const audit = (req: Request, res: Response, path: string, targetId: string, status: number, fields: string[] = []) =>
    recordAudit({ actor: actorOf(res), method: 'POST', path: `${base(res)}${path}`, family: 'organizations', targetId, status, requestId: req.id, fields });

  const show = async (req: Request, res: Response, notice?: { text: string; link?: string }, refusal?: FormState) => {
    const { org } = res.locals.access!;
    const me = res.locals.viewer!.user.id;
    const ms = await Membership.findAll({ where: { orgId: org.id } });
    const users = await User.findAll({ where: { id: ms.map((m) => m.userId) }, order: [['email', 'ASC']] });
    const invites = await InviteCode.findAll({ where: { orgId: org.id, disabled: false, uses: { [Op.lt]: InviteCode.sequelize!.col('max_uses') }, [Op.or]: [{ expiresAt: null }, { expiresAt: { [Op.gt]: new Date() } }] } as never, order: [['createdAt', 'DESC']] });
    const b = base(res);
    const link = (code: string) => `${config().publicBaseUrl}${invitePath(code)}`;
    const inv = formOf(refusal, 'invite');
    const budgets = await Promise.all(users.map((u) => memberBudget(deps.redis, ms.find((x) => x.userId === u.id)!)));
    renderOrgPage(req, res, kit, 'Members', 'members', (csrf) => html`<h1>Members</h1>
${notice ? html`<div class="card" role="status" data-test="notice"><p>${notice.text}</p>${notice.link ? html`<p class="secret" data-test="new-invite-link">${notice.link}</p>` : ''}</div>` : refusal ? '' : savedNotice(SAVED[String(req.query.saved ?? '')])}
<div class="card"><h2>Invite someone</h2><p class="muted">The invitee opens the link, sets a password and joins with the role chosen. The link works once, for ${INVITE_DAYS} days, for that email only; ${config().smtpUrl ? 'the gateway emails it to them.' : 'send it to them yourself (no mail server is set up: SMTP_URL).'}</p>
<form method="post" action="${b}/invitations" class="row"><input type="hidden" name="_csrf" value="${csrf}">${onceField()}
<div><label for="email">Email</label><input type="email" id="email" name="email" required maxlength="320" value="${typed(inv, 'email')}"${invalidAttrs(inv, 'email')}>${fieldError(inv, 'email')}</div>
<div><label for="role">Role</label><select id="role" name="role"${invalidAttrs(inv, 'role')}>${ROLES.map((r2) => html`<option value="${r2}"${typed(inv, 'role') === r2 ? html` selected` : ''}>${r2}</option>`)}</select>${fieldError(inv, 'role')}</div>
<div><button type="submit">Create invitation</button></div></form></div>
<div class="card"><h2>Members</h2><table data-test="members"><thead><tr><th>Email</th><th>Role</th><th>Limits</th><th></th></tr></thead><tbody>
${users.map((u, i) => { const m = ms.find((x) => x.userId === u.id)!; const st = formOf(refusal, `member:${u.id}`); return html`<tr data-user="${u.id}"><td data-label="Email">${u.email}${u.id === me ? html` <span class="muted">(you)</span>` : ''}</td>
<td data-label="Role"><form class="inline" method="post" action="${b}/${u.id}/role"><input type="hidden" name="_csrf" value="${csrf}"><select id="role-${u.id}" name="role" aria-label="Role of ${u.email}"${invalidAttrs(st, 'role')}>${ROLES.map((r2) => html`<option value="${r2}"${r2 === typed(st, 'role', m.role) ? ' selected' : ''}>${r2}</option>`)}</select> <button type="submit">Change role<span class="sr-only"> of ${u.email}</span></button></form>${fieldError(st, 'role')}</td>
${memberLimitsCell(`${b}/${u.id}/limits`, m, u.email, budgets[i], csrf, formOf(refusal, `limits:${u.id}`))}
<td>${confirmedAction({ action: `${b}/${u.id}/remove`, csrf, label: 'Remove…', confirm: u.id === me ? 'Leave the organization' : 'Remove member', question: u.id === me ? html`You leave <strong>${org.name}</strong>: this page and your keys in it stop working at once.` : html`<strong>${u.email}</strong> leaves <strong>${org.name}</strong>, and their keys in it stop working at once, on every pod.` })}${fieldError(formOf(refusal, `remove:${u.id}`), 'remove')}</td></tr>`; })}
</tbody></table></div>
<div class="card"><h2>Open invitations</h2><table data-test="invitations"><thead><tr><th>Email</th><th>Role</th><th>Link</th><th>Expires (UTC)</th><th></th></tr></thead><tbody>
${invites.map((i) => html`<tr><td data-label="Email">${i.email ?? 'anyone with the link'}</td><td data-label="Role">${i.role}</td><td data-label="Link">${i.mailedAt ? html`<span class="muted" data-test="invite-mailed">emailed to them</span>` : html`<p class="secret" data-test="invite-link">${link(i.code)}</p>`}</td><td data-label="Expires">${i.expiresAt ? utcText(i.expiresAt) : 'never'}</td>
<td>${confirmedAction({ action: `${b}/invitations/${i.id}/revoke`, csrf, label: 'Revoke…', confirm: 'Revoke the invitation', question: html`The link for <strong>${i.email ?? 'anyone'}</strong> stops working; you can invite them again.` })}</td></tr>`)}
${invites.length ? '' : html`<tr><td colspan="5" class="muted">No open invitations.</td></tr>`}</tbody></table></div>`);
  };

  r.get('/', (req, res) => show(req, res));
  r.post('/invitations', refuseImpersonation, (req, res) => withFormRefusal(req, res, async () => {
    const email = String(req.body?.email ?? '').trim().toLowerCase().slice(0, 320);
    const role = roleOf(req.body?.role ?? 'member');
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new ApiError(400, 'invalid_request', 'Enter a valid email address to invite.', { param: 'email' });
    const org = res.locals.access!.org;
    await once(deps.redis, req, async () => {
      // each invitation may mail anyone: an org's owners together make at most so many an hour
      const made = await countInWindow(deps.redis, keys.invitationsMade(org.id), 3600);
      if (made.count > config().webInvitationsPerHour) {
        await audit(req, res, '/invitations', org.id, 429, ['too_many_invitations']);
        throw new ApiError(429, 'too_many_invitations', `This organization made ${config().webInvitationsPerHour} invitations in the last hour; try again later.`, { retryAfter: made.ttl });
      }
      const inv = await createInvitation(org.id, email, role, res.locals.viewer!.user.id);
      const notice = await mailInvitation(inv, org.name, res.locals.viewer!.user.email);
      await audit(req, res, '/invitations', inv.id, 201, [`role:${role}`, `mail:${notice.outcome}`]);
      res.status(201);
      await show(req, res, notice);
    }, () => show(req, res.status(409), { text: `${RESENT}no other invitation was made or mailed. The invitation is listed below.` }));
  }, (state) => show(req, res, undefined, state), { form: 'invite' }));
  r.post('/invitations/:id/revoke', refuseImpersonation, async (req, res) => {
    const id = String(req.params.id);
    const [n] = /^[0-9a-f-]{36}$/.test(id) ? await InviteCode.update({ disabled: true }, { where: { id, orgId: res.locals.access!.org.id } }) : [0];
    if (!n) throw new ApiError(404, 'not_found', 'No such invitation in this organization.');
    await audit(req, res, `/invitations/${id}/revoke`, id, 200);
    res.redirect(303, `${base(res)}?saved=revoked`);
  });

  r.post('/:userId/role', refuseImpersonation, (req, res) => withFormRefusal(req, res, async () => {
    const role = roleOf(req.body?.role);
    const m = await changeMemberKeepingAnOwner(res.locals.access!.org.id, String(req.params.userId), role);
    await bumpEpoch(deps.redis);
    await audit(req, res, `/${m.userId}/role`, m.userId, 200, [`role:${role}`]);
    res.redirect(303, `${base(res)}?saved=role`);
  }, (state) => show(req, res, undefined, state), { form: `member:${String(req.params.userId)}`, field: 'role' }));
  r.post('/:userId/limits', refuseImpersonation, (req, res) => withFormRefusal(req, res, async () => {
    const limits = memberLimitsFromForm(req.body);
    const m = await updateMemberLimits(deps.redis, res.locals.access!.org.id, String(req.params.userId), limits);
    if (!m) throw new ApiError(404, 'not_found', 'No such member in this organization.');
    await audit(req, res, `/${m.userId}/limits`, m.userId, 200, Object.keys(limits));
    res.redirect(303, `${base(res)}?saved=limits`);
  }, (state) => show(req, res, undefined, state), { form: `limits:${String(req.params.userId)}` }));
  // refused (the last owner): the page again, the message under that member's Remove button
  r.post('/:userId/remove', refuseImpersonation, (req, res) => withFormRefusal(req, res, async () => {
    const userId = String(req.params.userId);
    const { revokedKeys } = await removeMember(deps.redis, res.locals.access!.org.id, userId, undefined, { keepAnOwner: true });
    await audit(req, res, `/${userId}/remove`, userId, 200, [`revoked_keys:${revokedKeys}`]);
    res.redirect(303, `${base(res)}?saved=removed`);
  }, (state) => show(req, res, undefined, state), { form: `remove:${String(req.params.userId)}`, field: 'remove' }));
  return r;
}
