import { Router, type Request, type Response } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import { ApiKey, Membership, Project, User } from '../../shared/db/models';
import { isUuid } from '../../shared/uuid';
import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey, updateKeyControls } from '../../shared/tenancy/ops';
import { controlCells, controlFields, controlsFromForm } from './key-controls-form';
import { keyOwnerFor } from '../../shared/tenancy/members';
import { recordAudit } from '../../shared/audit/audit';
import { ApiError } from '../../shared/errors/ApiError';
import { html } from '../web/html';
import type { WebKit } from '../web/session';
import { actorOf, renderOrgPage } from './org-page';
import { fieldError, invalidAttrs, typed, withFormRefusal, type FormState } from '../web/form-refusal';
import { confirmedAction } from '../web/confirm';
import { once, onceField, resentNotice } from '../web/once';
import { utcText } from '../web/format';
import { refuseImpersonation } from './member';
import { ownLimitsNote } from './member-limits';

const audit = (req: Request, res: Response, path: string, targetId: string, status: number, fields: string[] = []) =>
  recordAudit({ actor: actorOf(res), method: 'POST', path: `/dashboard/o/${res.locals.access!.org.slug}/keys${path}`, family: 'organizations', targetId, status, requestId: req.id, fields });

/**
 * The API keys of an organization. A key is its creator's (their search controls, tool policy and
 * membership apply to it); an owner may instead tick "organization-wide" for a key of no member. The
 * table names each key's owner. A member revokes their own keys; an owner any key of the org.
 */
export function keysPage(deps: { redis: RedisClient }, kit: WebKit): Router {
  const r = Router({ mergeParams: true });
  // `created`: the key just made, or rotated (`of`: its name; its secret shown once), or `resent` when the
  // page was reloaded and its form sent again (nothing made; `of`: the key not rotated a second time)
  const show = async (req: Request, res: Response, created?: { key: string; prefix: string; of?: string } | { resent: true; of?: string }, refusal?: FormState, refusedKey?: string) => {
    // a refusal belongs to the create form, or (refusedKey) to that key's limits form
    const refused = refusedKey ? undefined : refusal;
    const { org, role } = res.locals.access!;
    const me = res.locals.viewer!.user.id;
    const [keys, allProjects] = await Promise.all([listApiKeys(org.id), Project.findAll({ where: { orgId: org.id }, order: [['name', 'ASC']] })]);
    const projects = allProjects.filter((p) => !p.archivedAt);
    const projectName = new Map(allProjects.map((p) => [p.id, p.name]));
    const users = await User.findAll({ where: { id: [...new Set(keys.flatMap((k) => [k.userId, k.createdBy]).filter((u): u is string => !!u))] } });
    const cells = await Promise.all(keys.map((k) => controlCells(deps.redis, org.id, k)));
    const mine = await Membership.findOne({ where: { orgId: org.id, userId: me } });
    const ownerOf = (userId: string | null) => (userId ? (users.find((u) => u.id === userId)?.email ?? userId) : null);
    const b = `/dashboard/o/${org.slug}/keys`;
    // each key's actions go on a row of their own under it, so the figures keep the table's width
    const mayAct = (k: (typeof keys)[number]) => !k.revokedAt && (role === 'owner' || k.userId === me);
    const actions = (k: (typeof keys)[number], csrf: string) => {
      const label = k.name ?? k.prefix;
      const grace = html`<label for="grace-${k.id}">Old secret works for</label> <select id="grace-${k.id}" name="grace_seconds"><option value="0">no time</option><option value="3600">1 hour</option><option value="86400" selected>1 day</option><option value="604800">7 days</option></select> `;
      return html`${confirmedAction({ action: `${b}/${k.id}/rotate`, csrf, label: 'Rotate…', confirm: `Rotate ${label}`, plain: true, fields: html`${grace}${onceField()}`, question: html`A new secret for <strong>${label}</strong>, shown once; the old one keeps working for the time chosen.` })}
${confirmedAction({ action: `${b}/${k.id}/revoke`, csrf, label: 'Revoke…', confirm: `Revoke ${label}`, question: html`Requests with <strong>${label}</strong> (<code>${k.prefix}…</code>) are refused at once, on every pod. This cannot be undone.` })}
${role === 'owner' ? html`<details${k.id === refusedKey ? html` open` : ''}><summary>Edit limits of ${label}</summary><form method="post" action="${b}/${k.id}/controls" class="row"><input type="hidden" name="_csrf" value="${csrf}">${controlFields(k, k.id === refusedKey ? refusal : undefined)}<div><button type="submit">Save limits</button></div></form></details>` : ''}`;
    };
    renderOrgPage(req, res, kit, 'API keys', 'keys', (csrf) => html`<h1>API keys</h1>
${req.query.saved ? html`<div class="card" role="status" data-test="saved"><p>Limits saved.</p></div>` : ''}
${created && 'resent' in created ? resentNotice(created.of ? html`<strong>${created.of}</strong> was not rotated again. Its new secret was shown once, when it was rotated.` : 'no other key was made. The key it made is in the table below; its secret was shown once.')
  : created ? html`<div class="card" role="status"><p><strong>${created.of ? html`New secret for ${created.of}.` : 'Your new key.'}</strong> Copy it now: it is shown this once.</p><p class="secret" data-test="new-key">${created.key}</p></div>` : ''}
<div class="card"><h2>Create a key</h2><p class="muted">A key you create is yours: your web search switch, cap and tool policy apply to it, and it stops working if you leave the organization.</p>${ownLimitsNote(mine)}
<form method="post" action="${b}" class="row"><input type="hidden" name="_csrf" value="${csrf}">${onceField()}
<div><label for="name">Name</label><input type="text" id="name" name="name" maxlength="200" placeholder="e.g. production" value="${typed(refused, 'name')}"></div>
<div><label for="project">Project</label><select id="project" name="project"${invalidAttrs(refused, 'project')}><option value="">Any project</option>${projects.map((p) => html`<option value="${p.id}"${typed(refused, 'project') === p.id ? html` selected` : ''}>${p.name} (${p.slug})</option>`)}</select>${fieldError(refused, 'project')}</div>
${role === 'owner' ? html`<div><label><input type="checkbox" id="org_wide" name="org_wide" value="true"${typed(refused, 'org_wide') === 'true' ? html` checked` : ''}> Organization-wide (belongs to no member; no member's controls apply)</label></div>${controlFields(undefined, refused)}` : ''}
<div><button type="submit">Create key</button></div></form></div>
<div class="card"><table data-test="keys"><thead><tr><th>Key</th><th>Owner</th><th>Project</th><th>Created</th><th>Last used</th><th>State</th><th>Limits</th></tr></thead><tbody>
${keys.map((k, i) => html`<tr data-key-id="${k.id}"${mayAct(k) ? html` class="has-actions"` : ''}><td data-label="Key" data-test="key-name">${k.name ?? html`<span class="muted">unnamed</span>`}<br><code>${k.prefix}…</code></td><td data-label="Owner" data-test="key-owner" class="email">${ownerOf(k.userId) ?? html`<span class="pill">organization-wide</span>`}</td>
<td data-label="Project">${k.projectId ? (projectName.get(k.projectId) ?? k.projectId) : html`<span class="muted">any</span>`}</td><td data-label="Created" class="email"><span class="nowrap">${utcText(k.createdAt, 'day')}</span>${k.createdBy && k.createdBy !== k.userId ? html` by ${ownerOf(k.createdBy)}` : ''}</td><td data-label="Last used">${k.lastUsedAt ? html`<span class="nowrap">${utcText(k.lastUsedAt)}</span>` : 'never'}</td>
<td data-label="State">${k.revokedAt ? html`<span class="pill on">revoked</span>` : html`<span class="pill">active</span>`}${k.previousSecretUntil ? html`<p class="muted" data-test="grace">old secret until <span class="nowrap">${utcText(k.previousSecretUntil)}</span></p>` : ''}</td>
${cells[i]}</tr>
${mayAct(k) ? html`<tr class="key-actions" data-actions-of="${k.id}"><td colspan="7">${actions(k, csrf)}</td></tr>` : ''}`)}
${keys.length ? '' : html`<tr><td colspan="7" class="muted">No API keys yet: create one above.</td></tr>`}</tbody></table></div>`);
  };

  r.get('/', (req, res) => show(req, res));
  r.post('/', refuseImpersonation, (req, res) => withFormRefusal(req, res, async () => {
    const { org, role } = res.locals.access!;
    const projectId = String(req.body?.project ?? '') || null;
    const orgWide = req.body?.org_wide === 'true';
    const owner = keyOwnerFor({ userId: res.locals.viewer!.user.id, role }, orgWide);
    if ('refused' in owner) {
      await audit(req, res, '', org.id, 403, ['org_wide']);
      throw new ApiError(403, 'owner_required', owner.refused);
    }
    // not a project id at all is unknown too (Postgres refuses it as a uuid: it was a 500)
    if (projectId && (!isUuid(projectId) || !(await Project.findOne({ where: { id: projectId, orgId: org.id, archivedAt: null } })))) throw new ApiError(400, 'invalid_project', 'Unknown project for this organization.', { param: 'project' });
    // only an owner sets controls (a member's form has none of these fields)
    const controls = role === 'owner' ? controlsFromForm(req.body) : {};
    await once(deps.redis, req, async () => {
      const k = await createApiKey(deps.redis, { orgId: org.id, projectId, userId: owner.userId, name: String(req.body?.name ?? '').slice(0, 200) || undefined, controls, createdBy: res.locals.viewer!.user.id });
      await audit(req, res, '', k.id, 201, orgWide ? ['org_wide'] : []);
      res.status(201);
      await show(req, res, k);
    }, () => show(req, res.status(409), { resent: true }));
  }, (refused) => show(req, res, undefined, refused)));
  r.post('/:id/controls', refuseImpersonation, (req, res) => withFormRefusal(req, res, async () => {
    const { org, role } = res.locals.access!;
    if (role !== 'owner') throw new ApiError(403, 'owner_required', "Only an owner changes a key's limits.");
    const key = await ApiKey.findOne({ where: { id: req.params.id, orgId: org.id } }).catch(() => null);
    if (!key) throw new ApiError(404, 'not_found', 'No such key in this organization.');
    const controls = controlsFromForm(req.body);
    await updateKeyControls(deps.redis, key.id, controls);
    await audit(req, res, `/${key.id}/controls`, key.id, 200, Object.keys(controls));
    res.redirect(303, `/dashboard/o/${org.slug}/keys?saved=${key.id}`);
  }, (refused) => show(req, res, undefined, refused, String(req.params.id))));
  r.post('/:id/rotate', refuseImpersonation, async (req, res) => {
    const { org, role } = res.locals.access!;
    const key = await ApiKey.findOne({ where: { id: req.params.id, orgId: org.id, revokedAt: null } }).catch(() => null);
    const missing = () => new ApiError(404, 'not_found', 'No such active key in this organization.');
    if (!key) throw missing();
    if (role !== 'owner' && key.userId !== res.locals.viewer!.user.id) throw new ApiError(403, 'owner_required', 'Only an owner can rotate a key that is not yours.');
    const grace = Number(req.body?.grace_seconds ?? 86400);
    if (![0, 3600, 86400, 604800].includes(grace)) throw new ApiError(400, 'invalid_request', 'grace_seconds must be one of 0, 3600, 86400, 604800.');
    await once(deps.redis, req, async () => {
      const rotated = await rotateApiKey(deps.redis, key.id, grace);
      if (!rotated) throw missing(); // revoked meanwhile
      await audit(req, res, `/${key.id}/rotate`, key.id, 200, ['grace_seconds']);
      await show(req, res, { key: rotated.key, prefix: rotated.prefix, of: key.name ?? rotated.prefix });
    }, () => show(req, res.status(409), { resent: true, of: key.name ?? key.prefix }));
  });
  r.post('/:id/revoke', async (req, res) => {
    const { org, role } = res.locals.access!;
    const key = await ApiKey.findOne({ where: { id: req.params.id, orgId: org.id } }).catch(() => null);
    if (!key) throw new ApiError(404, 'not_found', 'No such key in this organization.');
    if (role !== 'owner' && key.userId !== res.locals.viewer!.user.id) throw new ApiError(403, 'owner_required', 'Only an owner can revoke a key that is not yours.');
    await revokeApiKey(deps.redis, key.id);
    await audit(req, res, `/${key.id}/revoke`, key.id, 200);
    res.redirect(303, `/dashboard/o/${org.slug}/keys`);
  });
  return r;
}
