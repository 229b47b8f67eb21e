import { Router, type Request, type Response } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import { Project } from '../../shared/db/models';
import { createProject, slugify } from '../../shared/tenancy/ops';
import { archiveProject } from '../../shared/tenancy/projects';
import { recordAudit } from '../../shared/audit/audit';
import { ApiError } from '../../shared/errors/ApiError';
import { html, type Html } from '../web/html';
import { page } from '../web/layout';
import { actorOf, renderOrgPage } from './org-page';
import { searchPage } from './search-page';
import type { Directory } from '../../shared/tenancy/directory';
import type { WebKit } from '../web/session';
import { stackedBars } from './chart';
import { orgUsage } from './usage';
import { membershipsOf, requireMember, requireOwner } from './member';
import { keysPage } from './keys-page';
import { membersPage } from './members-page';

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
  r.use('/o/:org', requireMember, org);

  org.get('/', async (req, res) => {
    const usage = await orgUsage(res.locals.access!.org.id, 30);
    const byModel = new Map<string, Map<string, number>>();
    const tokens = new Map<string, Map<string, number>>();
    const cost = new Map<string, Map<string, number>>();
    for (const row of usage.rows) {
      const label = `${row.model} (${row.modality})`;
      if (!byModel.has(label)) (byModel.set(label, new Map()), tokens.set(label, new Map()), cost.set(label, new Map()));
      cost.get(label)!.set(row.day, (cost.get(label)!.get(row.day) ?? 0) + row.costMicros / 1e6);
      byModel.get(label)!.set(row.day, (byModel.get(label)!.get(row.day) ?? 0) + row.requests);
      tokens.get(label)!.set(row.day, (tokens.get(label)!.get(row.day) ?? 0) + row.inputTokens + row.outputTokens);
    }
    const req1 = stackedBars({ from: usage.from, to: usage.to, title: 'Requests per day', series: [...byModel].map(([label, values]) => ({ label, values })) });
    const tok = stackedBars({ from: usage.from, to: usage.to, title: 'Tokens per day', series: [...tokens].map(([label, values]) => ({ label, values })) });
    const usd = stackedBars({ from: usage.from, to: usage.to, title: 'Cost per day (USD)', series: [...cost].map(([label, values]) => ({ label, values })) });
    const totals = new Map<string, { requests: number; input: number; output: number; audio: number; cost: number }>();
    for (const row of usage.rows) {
      const t = totals.get(`${row.model}\u0000${row.modality}`) ?? { requests: 0, input: 0, output: 0, audio: 0, cost: 0 };
      t.requests += row.requests; t.input += row.inputTokens; t.output += row.outputTokens; t.audio += row.audioSeconds; t.cost += row.costMicros;
      totals.set(`${row.model}\u0000${row.modality}`, t);
    }
    renderOrgPage(req, res, kit, 'Usage', 'usage', () => html`<h1>Usage, last 30 days (UTC)</h1>
<div class="card chart" data-test="requests-chart"><h2>Requests per day</h2>${req1.svg}<div class="legend">${req1.legend}</div></div>
<div class="card chart"><h2>Tokens per day (input + output)</h2>${tok.svg}<div class="legend">${tok.legend}</div></div>
<div class="card chart"><h2>Cost per day (USD, list prices)</h2>${usd.svg}<div class="legend">${usd.legend}</div></div>
<div class="card"><h2>By model and modality</h2><table data-test="usage-totals"><thead><tr><th>Model</th><th>Modality</th><th>Requests</th><th>Input tokens</th><th>Output tokens</th><th>Audio seconds</th><th>Cost (USD)</th></tr></thead><tbody>
${[...totals].map(([k, t]) => { const [model, modality] = k.split('\u0000'); return html`<tr><td data-label="Model">${model}</td><td data-label="Modality">${modality}</td><td data-label="Requests">${t.requests}</td><td data-label="Input tokens">${t.input}</td><td data-label="Output tokens">${t.output}</td><td data-label="Audio seconds">${Math.round(t.audio)}</td><td data-label="Cost (USD)">${(t.cost / 1e6).toFixed(6)}</td></tr>`; })}
${totals.size ? '' : html`<tr><td colspan="7" class="muted">No traffic yet.</td></tr>`}</tbody></table>
<p class="muted">Cost: tokens and audio seconds at each model's list prices, images at their recorded price, web searches at the overage charged (allowance and own-key searches are free); the same figures as <code>GET /admin/v1/billing/usage</code>.</p></div>`);
  });

  org.use('/keys', keysPage(deps, kit));

  org.get('/projects', async (req, res) => {
    const { org: o, role } = res.locals.access!;
    const projects = await Project.findAll({ where: { orgId: o.id }, order: [['archivedAt', 'DESC NULLS FIRST'], ['name', 'ASC']] });
    renderOrgPage(req, res, kit, 'Projects', 'projects', (csrf) => html`<h1>Projects</h1>
<div class="card"><p class="muted">Send a project's id or slug as the <code>SERVICE-PROJECT-ID</code> header, or call <code>/a/{key}/p/{project}/…</code>.</p>
<form method="post" action="/dashboard/o/${o.slug}/projects" class="row"><input type="hidden" name="_csrf" value="${csrf}">
<div><label for="pname">Name</label><input type="text" id="pname" name="name" required maxlength="200"></div>
<div><label for="pslug">Slug</label><input type="text" id="pslug" name="slug" maxlength="60" pattern="[a-z0-9][a-z0-9-]*" placeholder="from the name"></div>
<div><button type="submit">Create project</button></div></form></div>
<div class="card"><table><thead><tr><th>Name</th><th>Slug</th><th>Id</th><th>State</th><th></th></tr></thead><tbody>
${projects.map((p) => html`<tr><td>${p.name}</td><td><code>${p.slug}</code></td><td><code>${p.id}</code></td><td>${p.archivedAt ? html`<span class="pill on">archived</span>` : html`<span class="pill">active</span>`}</td>
<td>${!p.archivedAt && role === 'owner' ? html`<form class="inline" method="post" action="/dashboard/o/${o.slug}/projects/${p.id}/archive"><input type="hidden" name="_csrf" value="${csrf}"><button class="danger">Archive</button></form>` : ''}</td></tr>`)}
</tbody></table></div>`);
  });
  org.post('/projects', async (req, res) => {
    const o = res.locals.access!.org;
    const name = String(req.body?.name ?? '').trim().slice(0, 200);
    if (!name) throw new ApiError(400, 'invalid_request', 'A project needs a name.');
    const slug = slugify(String(req.body?.slug ?? '') || name);
    if (await Project.findOne({ where: { orgId: o.id, slug } })) throw new ApiError(409, 'project_exists', `A project with slug '${slug}' already exists.`);
    const p = await createProject(redis, o.id, name, slug);
    await audit(req, res, '/projects', p.id, 201);
    res.redirect(303, `/dashboard/o/${o.slug}/projects`);
  });
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
