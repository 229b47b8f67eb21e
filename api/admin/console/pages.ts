import { Router, type Request, type Response } from 'express';
import type { RedisClient } from '../../../shared/redis/connection';
import { Op, QueryTypes } from 'sequelize';
import { AuditLog, Organization, Plan, PlatformKey, User } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { ALL_SCOPES } from '../../../shared/platform/families';
import { createPlatformKey, deleteUser, revokePlatformKey, setPlatformAdmin } from '../../../shared/platform/keys';
import { FEATURES, isFeature, readSwitches, setSwitch } from '../../../shared/switches/switches';
import { recordAudit } from '../../../shared/audit/audit';
import { usageSource } from '../../../shared/metering/usage-source';
import { ApiError } from '../../../shared/errors/ApiError';
import { isUuid } from '../../../shared/uuid';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { html, type Html } from '../../web/html';
import { page } from '../../web/layout';
import { merged } from '../../../shared/merged';
import type { WebKit } from '../../web/session';
import type { SignedInChrome } from '../../web/error-page';
import { operatorActor } from './auth';
import { confirmedAction } from '../../web/confirm';
import { count, utcText } from '../../web/format';
import { startImpersonation } from './impersonate';
import { poolsPage } from './pools-page';
import { createPage } from './create-page';
import { consoleOrg, LANES_HINT, laneOverridesForm, orgPage, showConsoleOrg } from './org-page';
import { fieldError, invalidAttrs, savedNotice, ticked, typed, withFormRefusal, type FormState } from '../../web/form-refusal';
import { organizations } from '../resources/definitions/tenancy';
import { validate } from '../../validate';
import { once, onceField, resentNotice } from '../../web/once';

const TABS = [['/', 'Organizations'], ['/create', 'Create'], ['/keys', 'Platform keys'], ['/switches', 'Kill switches'], ['/pools', 'Model pools'], ['/users', 'Users'], ['/audit', 'Audit log'], ['/admin/queues', 'Queues']] as const;

function render(req: Request, res: Response, kit: WebKit, tab: string, body: (csrf: string) => Html): void {
  const c = consoleChrome(req, res, kit, tab);
  res.send(page(merged(c, { title: TABS.find((t) => t[0] === tab)?.[1] ?? 'Console', base: '' }), body(c.csrf!)));
}

/** The console's tabs, the operator and sign-out (also around its error pages). */
export function consoleChrome(req: Request, res: Response, kit: WebKit, tab: string): SignedInChrome {
  const csrf = kit.csrfToken(req, res);
  return { brand: 'Gateway operator console', user: res.locals.operator!.email, csrf, nav: TABS.map(([href, label]) => ({ href, label, on: href === tab })) };
}
const hidden = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;
const postButton = (action: string, csrf: string, label: string, cls = 'danger') => html`<form class="inline" method="post" action="${action}">${hidden(csrf)}<button class="${cls}">${label}</button></form>`;
/** Console writes are audited like the management API's, under the operator's session. */
const audit = (req: Request, res: Response, path: string, targetId: string | null, status = 200, fields: string[] = []) =>
  recordAudit({ actor: operatorActor(res), method: 'POST', path, family: 'console', targetId, status, requestId: req.id, fields });

/** The operator console's pages (platform admins): orgs, platform keys, kill switches, users, audit log. */
export function consolePages(redis: RedisClient, kit: WebKit): Router {
  const r = Router();

  const orgsPage = async (req: Request, res: Response, refusal?: FormState) => {
    const [orgs, plans] = await Promise.all([Organization.findAll({ order: [['name', 'ASC']], limit: 500 }), Plan.findAll()]);
    const src = await usageSource({ from: new Date(Date.now() - 30 * 86_400_000) });
    const usage = await db().query<{ org_id: string; requests: string; tokens: string }>(
      `SELECT org_id, sum(requests) AS requests, sum(input_tokens + output_tokens) AS tokens FROM (${src.sql}) AS src GROUP BY 1`,
      { type: QueryTypes.SELECT, replacements: src.replacements },
    );
    const byOrg = new Map(usage.map((u) => [u.org_id, u]));
    const saved = { plan: 'Plan saved.', lanes: 'Lane overrides saved.' }[String(req.query.saved ?? '')];
    render(req, res, kit, '/', (csrf) => html`<h1>Organizations</h1>${refusal ? '' : savedNotice(saved)}<div class="card">${LANES_HINT}<table><thead><tr><th>Name</th><th>Slug</th><th>Plan</th><th>Lane overrides</th><th>Requests (30 d)</th><th>Tokens (30 d)</th></tr></thead><tbody>
${orgs.map((o) => html`<tr><td><a href="/orgs/${o.id}">${o.name}</a></td><td data-label="Slug"><code class="id">${o.slug}</code></td><td data-label="Plan"><form method="post" action="/orgs/${o.id}/plan" class="row" data-org="${o.slug}">${hidden(csrf)}<select name="plan_id" aria-label="Plan of ${o.slug}"><option value="">—</option>${plans.map((p) => html`<option value="${p.id}" ${p.id === o.planId ? html`selected` : ''}>${p.name}</option>`)}</select><button class="plain">Set</button></form></td>
<td data-label="Lane overrides">${laneOverridesForm(o, csrf, 'list', refusal)}</td><td data-label="Requests (30 d)">${count(Number(byOrg.get(o.id)?.requests ?? 0))}</td><td data-label="Tokens (30 d)">${count(Number(byOrg.get(o.id)?.tokens ?? 0))}</td></tr>`)}
${orgs.length ? '' : html`<tr><td colspan="6" class="muted">No organizations yet: <a href="/create">create one</a>.</td></tr>`}</tbody></table></div>`);
  };
  r.get('/', (req, res) => orgsPage(req, res));

  r.post('/orgs/:id/plan', async (req, res) => {
    const org = await consoleOrg(String(req.params.id));
    const planId = String(req.body?.plan_id ?? '') || null;
    if (planId && !(isUuid(planId) && (await Plan.findByPk(planId)))) throw new ApiError(400, 'invalid_reference', 'No such plan.');
    await org.update({ planId });
    await bumpEpoch(redis); // every pod sees the plan's lanes and entitlements on its next request
    await audit(req, res, `/admin/v1/organizations/${org.id}`, org.id, 200, ['plan_id']);
    res.redirect(303, '/?saved=plan');
  });

  // lane overrides as `pool:lane=n` pairs, validated by the organizations family's own field schema
  // a refused form comes back on the page it was on, with what was typed and the message after the field
  r.post('/orgs/:id/lanes', async (req, res) => {
    const org = await consoleOrg(String(req.params.id));
    const onOrgPage = req.body?.back === 'org';
    await withFormRefusal(req, res, async () => {
      const text = String(req.body?.lane_overrides ?? '').trim();
      const pairs: Record<string, unknown> = {};
      for (const part of text ? text.split(/[\s,]+/).filter(Boolean) : []) {
        const m = /^([^=]+)=(\d+)$/.exec(part);
        if (!m) throw new ApiError(400, 'invalid_request', `'${part.slice(0, 40)}' is not a pool:lane=count pair.`);
        pairs[m[1]] = Number(m[2]);
      }
      let laneOverrides: Record<string, number>;
      try {
        laneOverrides = validate<Record<string, number>>(organizations.fields.lane_overrides.schema.label('lane_overrides'), pairs);
      } catch (err) {
        // the schema names the pair at fault; on the page the field is the whole text
        throw err instanceof ApiError ? new ApiError(err.status, err.code, err.message) : err;
      }
      await org.update({ laneOverrides });
      await bumpEpoch(redis); // every pod applies the lanes on its next request
      await audit(req, res, `/admin/v1/organizations/${org.id}`, org.id, 200, ['lane_overrides']);
      res.redirect(303, onOrgPage ? `/orgs/${org.id}?saved=lanes` : '/?saved=lanes');
    }, (state) => (onOrgPage ? showConsoleOrg(req, res, (rq, rs, tab, body) => render(rq, rs, kit, tab, body), org, state) : orgsPage(req, res, state)),
    { form: `lanes:${org.id}`, field: 'lane_overrides' });
  });

  // `created`: the key just made (shown once), or 'resent' when a reload sent the form again (nothing made)
  const keysPage = async (req: Request, res: Response, created?: { key: string } | 'resent', refused?: FormState) => {
    const keys = await PlatformKey.findAll({ order: [['createdAt', 'DESC']], limit: 500 });
    const owners = await User.findAll({ where: { id: [...new Set(keys.map((k) => k.userId))] } });
    render(req, res, kit, '/keys', (csrf) => html`<h1>Platform keys</h1>
${created === 'resent' ? resentNotice('no other key was made. The key it made is in the table below; its secret was shown once.') : created ? html`<div class="card" role="status"><p><strong>New management key.</strong> Copy it now: it is shown this once.</p><p class="secret" data-test="new-platform-key">${created.key}</p></div>` : ''}
<div class="card"><h2>Create a management key</h2><form method="post" action="/keys">${hidden(csrf)}${onceField()}
<label for="kname">Name</label><input type="text" id="kname" name="name" maxlength="200" value="${typed(refused, 'name')}">
<fieldset class="checks"${invalidAttrs(refused, 'scopes')}><legend>Scopes</legend>${ALL_SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value="${s}"${ticked(refused, 'scopes', s) ? html` checked` : ''}>${s}</label>`)}</fieldset>${fieldError(refused, 'scopes')}
<p><button type="submit">Create key</button></p></form></div>
<div class="card"><table><thead><tr><th>Name</th><th>Key</th><th>Owner</th><th>Scopes</th><th>State</th><th></th></tr></thead><tbody>
${keys.map((k) => html`<tr data-key-id="${k.id}"><td>${k.name ?? html`<span class="muted">unnamed</span>`}</td><td data-label="Key"><code>${k.prefix}…</code></td><td data-label="Owner">${owners.find((u) => u.id === k.userId)?.email ?? ''}</td><td data-label="Scopes">${k.scopes.join(', ')}</td>
<td data-label="State">${k.revokedAt ? html`<span class="pill on">revoked</span>` : html`<span class="pill">active</span>`}</td><td>${k.revokedAt ? '' : confirmedAction({ action: `/keys/${k.id}/revoke`, csrf, label: 'Revoke…', confirm: `Revoke ${k.name ?? k.prefix}`, question: html`Requests with <code>${k.prefix}…</code> to the management API are refused at once. This cannot be undone.` })}</td></tr>`)}
${keys.length ? '' : html`<tr><td colspan="6" class="muted">No platform keys yet.</td></tr>`}</tbody></table></div>`);
  };
  r.get('/keys', (req, res) => keysPage(req, res));
  r.post('/keys', (req, res) => withFormRefusal(req, res, async () => {
    const raw = req.body?.scopes;
    const scopes = (Array.isArray(raw) ? raw : raw ? [raw] : []).map(String);
    if (!scopes.length || scopes.some((s) => !ALL_SCOPES.includes(s))) throw new ApiError(400, 'invalid_scopes', 'Choose at least one known scope.', { param: 'scopes' });
    await once(redis, req, async () => {
      const k = await createPlatformKey({ userId: res.locals.operator!.id, scopes, name: String(req.body?.name ?? '').slice(0, 200) || null }, operatorActor(res));
      res.status(201);
      await keysPage(req, res, k);
    }, () => keysPage(req, res.status(409), 'resent'));
  }, (state) => keysPage(req, res, undefined, state)));
  r.post('/keys/:id/revoke', async (req, res) => {
    if (!(await revokePlatformKey(String(req.params.id), operatorActor(res)))) throw new ApiError(404, 'not_found', 'No active platform key with that id.');
    res.redirect(303, '/keys');
  });

  r.get('/switches', async (req, res) => {
    const state = await readSwitches(redis);
    render(req, res, kit, '/switches', (csrf) => html`<h1>Kill switches</h1><div class="card"><p class="muted">An engaged switch makes the feature answer 503 with its code on every pod within a second.</p>
<table><thead><tr><th>Feature</th><th>Code</th><th>State</th><th></th></tr></thead><tbody>
${Object.entries(FEATURES).map(([f, code]) => { const on = state[f as keyof typeof FEATURES]; return html`<tr><td>${f}</td><td data-label="Code"><code>${code}</code></td><td data-label="State">${on ? html`<span class="pill on">engaged</span>` : html`<span class="pill">off</span>`}</td>
<td><form class="inline" method="post" action="/switches/${f}">${hidden(csrf)}<input type="hidden" name="engaged" value="${on ? 'false' : 'true'}"><button class="${on ? 'plain' : 'danger'}">${on ? 'Release' : 'Engage…'}</button></form></td></tr>`; })}
</tbody></table></div>`);
  });
  r.post('/switches/:feature', async (req, res) => {
    const f = String(req.params.feature);
    if (!isFeature(f)) throw new ApiError(404, 'not_found', `No kill switch '${f}'.`);
    const engaged = req.body?.engaged === 'true';
    if (engaged && req.body?.confirm !== 'yes') {
      // engaging stops the feature for every organization: a page that says so, and changes nothing until Confirm
      return render(req, res, kit, '/switches', (csrf) => html`<h1>Engage ${f}?</h1><div class="card" role="alert" data-test="confirm-switch"><p>Engaging <strong>${f}</strong> makes it answer 503 <code>${FEATURES[f]}</code> for <strong>every organization</strong>, on every pod within a second, until it is released.</p>
<form class="inline" method="post" action="/switches/${f}">${hidden(csrf)}<input type="hidden" name="engaged" value="true"><input type="hidden" name="confirm" value="yes"><button class="danger">Confirm: engage for every organization</button></form> <a href="/switches">Cancel</a></div>`);
    }
    await setSwitch(redis, f, engaged);
    await audit(req, res, `/admin/v1/kill-switches/${f}`, null, 200, [`engaged:${engaged}`]);
    res.redirect(303, '/switches');
  });

  r.get('/users', async (req, res) => {
    const users = await User.findAll({ where: { deletedAt: null }, order: [['email', 'ASC']], limit: 500 });
    const self = res.locals.operator!.id;
    render(req, res, kit, '/users', (csrf) => html`<h1>Users</h1><div class="card"><table><thead><tr><th>Email</th><th>Name</th><th>Role</th><th>Actions</th></tr></thead><tbody>
${users.map((u) => html`<tr data-user="${u.email}"><td>${u.email}${u.id === self ? html` <span class="muted">(you)</span>` : ''}</td><td data-label="Name">${u.name ?? ''}</td><td data-label="Role">${u.isPlatformAdmin ? html`<span class="pill on">platform admin</span>` : 'user'}</td><td>
${u.id === self ? '' : html`${u.isPlatformAdmin
  ? confirmedAction({ action: `/users/${u.id}/demote`, csrf, label: 'Demote…', confirm: 'Demote', plain: true, question: html`<strong>${u.email}</strong> can no longer use this console, and their management keys and tokens stop working.` })
  : confirmedAction({ action: `/users/${u.id}/promote`, csrf, label: 'Promote…', confirm: 'Make platform admin', plain: true, question: html`<strong>${u.email}</strong> can then use this console: every organization, user, key and kill switch of the platform.` })}
${u.isPlatformAdmin ? '' : postButton(`/users/${u.id}/impersonate`, csrf, 'Impersonate', 'plain')} ${confirmedAction({ action: `/users/${u.id}/delete`, csrf, label: 'Delete…', confirm: 'Delete user', question: html`<strong>${u.email}</strong> can no longer sign in; everything they own is revoked, their inference keys in every organization included, on every pod. This cannot be undone here.` })}`}</td></tr>`)}
</tbody></table></div>`);
  });
  const target = async (req: Request, res: Response): Promise<User> => {
    const id = String(req.params.id);
    const u = isUuid(id) ? await User.findOne({ where: { id, deletedAt: null } }) : null;
    if (!u) throw new ApiError(404, 'not_found', 'No such user.');
    if (u.id === res.locals.operator!.id) throw new ApiError(400, 'self_action', 'Operators cannot demote, delete or impersonate themselves here.');
    return u;
  };
  r.post('/users/:id/:action', async (req, res) => {
    const action = String(req.params.action);
    if (!['promote', 'demote', 'delete', 'impersonate'].includes(action)) throw new ApiError(404, 'not_found', 'No such action.');
    const u = await target(req, res);
    if (action === 'impersonate') {
      const started = await startImpersonation(redis, req, u, operatorActor(res), res.locals.operator!);
      return render(req, res, kit, '/users', () => html`<h1>Impersonate ${u.email}</h1><div class="card"><p>A one-use link, valid for a minute, opens ${u.email}'s dashboard in a marked ${started.minutes}-minute session:</p>
<p><a href="${started.url}" target="_blank" rel="noopener" data-test="impersonation-link">${started.url}</a></p></div>`);
    }
    if (action === 'delete') await deleteUser(u, operatorActor(res)).then(() => bumpEpoch(redis)); // their inference keys die on every pod
    else await setPlatformAdmin(u, action === 'promote', operatorActor(res));
    await audit(req, res, `/admin/v1/users/${u.id}${action === 'delete' ? '' : '/platform-admin'}`, u.id, 200, [action]);
    res.redirect(303, '/users');
  });

  r.get('/audit', async (req, res) => {
    const rows = await AuditLog.findAll({ order: [['createdAt', 'DESC']], limit: 200, where: req.query.q ? { path: { [Op.iLike]: `%${String(req.query.q)}%` } } : {} });
    render(req, res, kit, '/audit', () => html`<h1>Audit log</h1><div class="card"><form method="get" action="/audit" class="row"><div><label for="q">Path contains</label><input type="text" id="q" name="q" value="${String(req.query.q ?? '')}"></div><div><button>Filter</button></div></form></div>
<div class="card"><table><thead><tr><th>When (UTC)</th><th>Actor</th><th>Action</th><th>Target</th><th>Status</th></tr></thead><tbody>
${rows.map((a) => html`<tr><td data-label="When">${utcText(a.createdAt, 'second')}</td><td data-label="Actor">${a.actorLabel ?? a.actorType}</td><td data-label="Action"><code>${a.method} ${a.path}</code> ${a.fields.length ? html`<span class="muted">${a.fields.join(', ')}</span>` : ''}</td><td data-label="Target"><code>${a.targetId ?? ''}</code></td><td data-label="Status">${a.status}</td></tr>`)}
${rows.length ? '' : html`<tr><td colspan="5" class="muted">${req.query.q ? 'No audit entries match.' : 'No audit entries yet.'}</td></tr>`}
</tbody></table></div>`);
  });
  poolsPage(r, redis, (req, res, tab, body) => render(req, res, kit, tab, body));
  createPage(r, redis, (req, res, tab, body) => render(req, res, kit, tab, body));
  orgPage(r, (req, res, tab, body) => render(req, res, kit, tab, body));
  return r;
}
