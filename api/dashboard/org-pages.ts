import { Router, type Request, type Response } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import { Project } from '../../shared/db/models';
import { createProject, projectExists, slugify } from '../../shared/tenancy/ops';
import { archiveProject, setProjectBudget } from '../../shared/tenancy/projects';
import { projectBudgetCell, projectBudgetForm, projectBudgetFromForm } from './project-budget';
import { recordAudit } from '../../shared/audit/audit';
import { ApiError } from '../../shared/errors/ApiError';
import { html, type Html } from '../web/html';
import { page } from '../web/layout';
import { actorOf, orgChrome, renderOrgPage } from './org-page';
import { setPageChrome } from '../web/error-page';
import { searchPage } from './search-page';
import type { Directory } from '../../shared/tenancy/directory';
import type { WebKit } from '../web/session';
import { usagePage } from './usage-page';
import { fieldError, formOf, invalidAttrs, typed, withFormRefusal, type FormState } from '../web/form-refusal';
import { modelsPage } from './models-page';
import { membershipsOf, requireMember, requireOwner } from './member';
import { keysPage } from './keys-page';
import { membersPage } from './members-page';
import { confirmedAction } from '../web/confirm';
import { activityBody, activityDetail, activityQuery, activityQueryOrRefusal, sendActivityCsv } from '../web/activity';

const audit = (req: Request, res: Response, path: string, targetId: string, status = 200) =>
  recordAudit({ actor: actorOf(res), method: 'POST', path: `/dashboard/o/${res.locals.access!.org.slug}${path}`, family: 'organizations', targetId, status, requestId: req.id });

/** The pages of one organization: usage, API keys (./keys-page.ts), projects, web search (owners). */
export function orgPages(deps: { redis: RedisClient; directory: Directory }, kit: WebKit): Router {
  const { redis } = deps;
  const r = Router({ mergeParams: true });
  r.get('/', async (req, res) => {
    const orgs = await membershipsOf(res.locals.viewer!.user.id);
    if (orgs.length === 1) return res.redirect(303, `/dashboard/o/${orgs[0].org.slug}`);
    res.send(page({ title: 'Organizations', base: '/dashboard', brand: 'Gateway dashboard', user: res.locals.viewer!.user.email, csrf: kit.csrfToken(req, res) },
      html`<h1>Your organizations</h1><div class="card">${orgs.length ? html`<ul>${orgs.map((o) => html`<li><a href="/dashboard/o/${o.org.slug}">${o.org.name}</a> <span class="pill">${o.role}</span></li>`)}</ul>` : html`<p>You are not a member of any organization yet.</p>`}</div>`));
  });

  const org = Router({ mergeParams: true });
  r.use('/o/:org', requireMember, (req, res, next) => {
    setPageChrome(res, () => orgChrome(req, res, kit, ''));
    next();
  }, org);

  org.get('/', usagePage(kit));
  org.get('/models', modelsPage(deps, kit));
  // the request log (api/web/activity.ts): the page, its CSV export, one request's details
  const activityBase = (res: Response) => `/dashboard/o/${res.locals.access!.org.slug}/activity`;
  org.get('/activity', async (req, res) => {
    const { q, refusal } = activityQueryOrRefusal(req, res);
    const body = await activityBody(activityBase(res), res.locals.access!.org.id, q, refusal);
    renderOrgPage(req, res, kit, 'Activity', 'activity', () => body);
  });
  org.get('/activity.csv', (req, res) => sendActivityCsv(res, res.locals.access!.org.id, activityQuery(req.query)));
  org.get('/activity/:requestId', async (req, res) => {
    const body = await activityDetail(activityBase(res), res.locals.access!.org.id, String(req.params.requestId));
    renderOrgPage(req, res, kit, 'Activity', 'activity', () => body);
  });

  org.use('/keys', keysPage(deps, kit));

  const showProjects = async (req: Request, res: Response, refused?: FormState) => {
    const { org: o, role } = res.locals.access!;
    const projects = await Project.findAll({ where: { orgId: o.id }, order: [['archivedAt', 'DESC NULLS FIRST'], ['name', 'ASC']] });
    const budgets = await Promise.all(projects.map((p) => projectBudgetCell(redis, p)));
    const create = refused?.form ? undefined : refused;
    renderOrgPage(req, res, kit, 'Projects', 'projects', (csrf) => html`<h1>Projects</h1>
${req.query.created && !refused ? html`<div class="card" role="status" data-test="saved"><p>Project created.</p></div>` : ''}
${req.query.budget && !refused ? html`<div class="card" role="status" data-test="saved"><p>Budget saved.</p></div>` : ''}
<div class="card"><p class="muted">Send a project's id or slug as the <code>SERVICE-PROJECT-ID</code> header, or call <code>/a/{key}/p/{project}/…</code>.</p>
<form method="post" action="/dashboard/o/${o.slug}/projects" class="row"><input type="hidden" name="_csrf" value="${csrf}">
<div><label for="pname">Name</label><input type="text" id="pname" name="name" required maxlength="200" value="${typed(create, 'name')}"${invalidAttrs(create, 'name')}>${fieldError(create, 'name')}</div>
<div><label for="pslug">Slug</label><input type="text" id="pslug" name="slug" maxlength="60" pattern="[a-z0-9][a-z0-9-]*" placeholder="from the name" value="${typed(create, 'slug')}"${invalidAttrs(create, 'slug')}>${fieldError(create, 'slug')}</div>
<div><button type="submit">Create project</button></div></form></div>
<div class="card"><p class="muted">A project's budget (US dollars per UTC day, month, or in total) is shared by every request made with the project; a request that does not fit answers 402 <code>budget_exceeded</code>.</p><table><thead><tr><th>Name and slug</th><th>Id</th><th>State</th><th>Budget</th></tr></thead><tbody>
${projects.map((p, i) => {
    // an owner's budget form and Archive go on a row of their own under the project (as a key's actions do), so the name keeps its width
    const mayAct = !p.archivedAt && role === 'owner';
    return html`<tr data-project="${p.id}"${mayAct ? html` class="has-actions"` : ''}><td data-label="Name" class="name">${p.name}<br><code class="id">${p.slug}</code></td><td data-label="Id"><code class="id">${p.id}</code></td><td data-label="State">${p.archivedAt ? html`<span class="pill on">archived</span>` : html`<span class="pill">active</span>`}</td>
${budgets[i]}</tr>
${mayAct ? html`<tr class="row-actions" data-actions-of="${p.id}"><td colspan="4"><div class="actions">${projectBudgetForm(o.slug, p, csrf, formOf(refused, `budget:${p.id}`))}${confirmedAction({ action: `/dashboard/o/${o.slug}/projects/${p.id}/archive`, csrf, label: 'Archive…', confirm: `Archive ${p.name}`, question: html`Requests that name <strong>${p.name}</strong> (<code>${p.slug}</code>) are refused with 400 <code>invalid_project</code> from then on. It cannot be restored here.` })}</div></td></tr>` : ''}`;
  })}
${projects.length ? '' : html`<tr><td colspan="4" class="muted">No projects yet: create one above.</td></tr>`}</tbody></table></div>`);
  };
  org.get('/projects', (req, res) => showProjects(req, res));
  org.post('/projects', (req, res) => withFormRefusal(req, res, async () => {
    const o = res.locals.access!.org;
    const name = String(req.body?.name ?? '').trim().slice(0, 200);
    if (!name) throw new ApiError(400, 'invalid_request', 'A project needs a name.', { param: 'name' });
    const slug = slugify(String(req.body?.slug ?? '') || name);
    if (await Project.findOne({ where: { orgId: o.id, slug } })) throw projectExists(slug, req.body?.slug ? 'slug' : 'name');
    const p = await createProject(redis, o.id, name, slug);
    await audit(req, res, '/projects', p.id, 201);
    res.redirect(303, `/dashboard/o/${o.slug}/projects?created=${p.id}`);
  }, (refused) => showProjects(req, res, refused)));
  org.post('/projects/:id/budget', requireOwner, (req, res) => withFormRefusal(req, res, async () => {
    const o = res.locals.access!.org;
    const p = await Project.findOne({ where: { orgId: o.id, archivedAt: null, id: String(req.params.id) } }).catch(() => null);
    if (!p) throw new ApiError(404, 'not_found', 'No such active project in this organization.');
    await setProjectBudget(redis, p, projectBudgetFromForm(req.body));
    await audit(req, res, `/projects/${p.id}/budget`, p.id);
    res.redirect(303, `/dashboard/o/${o.slug}/projects?budget=${p.id}`);
  }, (refused) => showProjects(req, res, refused), { form: `budget:${String(req.params.id)}` }));
  org.post('/projects/:id/archive', requireOwner, async (req, res) => {
    const p = await archiveProject(redis, res.locals.access!.org.id, String(req.params.id));
    if (!p) throw new ApiError(404, 'not_found', 'No such active project in this organization.');
    await audit(req, res, `/projects/${p.id}/archive`, p.id);
    res.redirect(303, `/dashboard/o/${res.locals.access!.org.slug}/projects`);
  });
  org.use('/search', searchPage(deps, kit));
  org.use('/members', membersPage(deps, kit));
  return r;
}
