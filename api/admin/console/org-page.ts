import type { Router, Request, Response } from 'express';
import { ApiKey, Membership, Organization, Project, SearchSetting, User } from '../../../shared/db/models';
import { orgUsageFigures } from '../../../shared/billing/usage-figures';
import { ApiError } from '../../../shared/errors/ApiError';
import { isUuid } from '../../../shared/uuid';
import { addDays, utcDay } from '../../../shared/metering/rollups';
import { stackedBars } from '../../dashboard/chart';
import { html, type Html } from '../../web/html';
import { fieldError, formOf, invalidAttrs, savedNotice, typed, type FormState } from '../../web/form-refusal';
import { budgetText, count, counted, rateText, usd, utcText } from '../../web/format';
import { activityBody, activityDetail, activityQuery, activityQueryOrRefusal, sendActivityCsv } from '../../web/activity';

type Render = (req: Request, res: Response, tab: string, body: (csrf: string) => Html) => void;

/** How the lane overrides field is written, said once above the forms (the placeholder is kept short enough to be read whole on a phone). */
export const LANES_HINT = html`<p class="muted">Lane overrides: <code>pool:lane=count</code> pairs separated by commas, e.g. <code>chat:interactive=4, images:background=1</code>; empty clears them.</p>`;

/**
 * The lane overrides form (`pool:lane=n` pairs, posted to `/orgs/:id/lanes`), on the list and on the
 * org's page (`back` says which, for the answer). A refusal (FormState.form `lanes:<org id>`) shows
 * what was typed and the message after the field.
 */
export function laneOverridesForm(o: Organization, csrf: string, back: 'list' | 'org', refusal?: FormState): Html {
  const st = formOf(refusal, `lanes:${o.id}`);
  const current = Object.entries(o.laneOverrides ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(', ');
  return html`<form method="post" action="/orgs/${o.id}/lanes" class="row" data-lanes="${o.slug}"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="back" value="${back}"><div><input type="text" class="lanes" id="lanes-${o.id}" name="lane_overrides" aria-label="Lane overrides of ${o.slug}" placeholder="chat:interactive=4" value="${typed(st, 'lane_overrides', current)}"${invalidAttrs(st, 'lane_overrides')}>${fieldError(st, 'lane_overrides')}</div><button class="plain">Save</button></form>`;
}

/**
 * `GET /orgs/:id`: one organization as an operator sees it — members, inference keys (prefix only,
 * never a secret), projects, the last 30 days of usage (the dashboard's figures and chart), web search
 * settings and the lane overrides form.
 */
export function orgPage(r: Router, render: Render): void {
  // the org's request log, as its members see it in the dashboard (api/web/activity.ts)
  const orgOf = (req: Request) => consoleOrg(String(req.params.id));
  r.get('/orgs/:id/activity', async (req, res) => {
    const org = await orgOf(req);
    const { q, refusal } = activityQueryOrRefusal(req, res);
    const body = await activityBody(`/orgs/${org.id}/activity`, org.id, q, refusal);
    render(req, res, '/', () => html`<p class="muted"><a href="/orgs/${org.id}">${org.name}</a></p>${body}`);
  });
  r.get('/orgs/:id/activity.csv', async (req, res) => sendActivityCsv(res, (await orgOf(req)).id, activityQuery(req.query)));
  r.get('/orgs/:id/activity/:requestId', async (req, res) => {
    const org = await orgOf(req);
    const body = await activityDetail(`/orgs/${org.id}/activity`, org.id, String(req.params.requestId));
    render(req, res, '/', () => body);
  });
  r.get('/orgs/:id', async (req, res) => showConsoleOrg(req, res, render, await orgOf(req)));
}

/** The organization of a console path, or 404 not_found. */
export async function consoleOrg(id: string): Promise<Organization> {
  const org = isUuid(id) ? await Organization.findByPk(id) : null;
  if (!org) throw new ApiError(404, 'not_found', 'No such organization.');
  return org;
}

/** One organization's console page; `refusal` is its refused lane overrides form. */
export async function showConsoleOrg(req: Request, res: Response, render: Render, org: Organization, refusal?: FormState): Promise<void> {
  const [members, keys, projects, search, usage] = await Promise.all([
    Membership.findAll({ where: { orgId: org.id }, order: [['createdAt', 'ASC']] }),
    ApiKey.findAll({ where: { orgId: org.id }, order: [['createdAt', 'DESC']], limit: 500 }),
    Project.findAll({ where: { orgId: org.id }, order: [['name', 'ASC']] }),
    SearchSetting.findOne({ where: { orgId: org.id } }),
    orgUsageFigures(org.id, 30),
  ]);
  const users = new Map((await User.findAll({ where: { id: [...new Set([...members.map((m) => m.userId), ...keys.map((k) => k.userId).filter((u): u is string => !!u)])] } })).map((u) => [u.id, u.email]));
  const projectName = new Map(projects.map((p) => [p.id, p.name]));
  const perDay = new Map<string, number>();
  for (const row of usage.rows) perDay.set(row.day, (perDay.get(row.day) ?? 0) + row.requests);
  const to = addDays(utcDay(new Date()), 1);
  const chart = stackedBars({ from: addDays(to, -30), to, title: 'Requests per day', series: [{ label: 'requests', values: perDay }] });
  const t = usage.totals;
  const state = (k: ApiKey) => (k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= new Date() ? 'expired' : 'active');
  // a key's limits, or a member's (which every key the member owns carries: docs/keys.md "Member limits")
  const limits = (k: Pick<ApiKey, 'allowedModels' | 'rpm' | 'tpm' | 'budgetMicros' | 'budgetPeriod'> & { expiresAt?: Date | null }) => [k.allowedModels ? `models: ${k.allowedModels.join(', ')}` : '', k.rpm || k.tpm ? rateText(k.rpm, k.tpm) : '',
    k.budgetMicros !== null && k.budgetMicros !== undefined ? budgetText(k.budgetMicros, k.budgetPeriod ?? 'total') : '', k.expiresAt ? `expires ${utcText(k.expiresAt, 'day')}` : ''].filter(Boolean).join(' · ') || '—';
  render(req, res, '/', (csrf) => html`<h1>${org.name} <code>${org.slug}</code></h1>
<p><a class="button-link" href="/orgs/${org.id}/activity" data-test="org-activity">Activity (request log)</a></p>
${refusal ? '' : savedNotice(req.query.saved === 'lanes' ? 'Lane overrides saved.' : undefined)}
<div class="card" data-section="members"><h2>Members</h2><table><thead><tr><th>Email</th><th>Role</th><th>Limits</th></tr></thead><tbody>
${members.map((m) => html`<tr><td>${users.get(m.userId) ?? m.userId}</td><td data-label="Role">${m.role}</td><td data-label="Limits" data-test="member-limits">${limits(m)}</td></tr>`)}
${members.length ? '' : html`<tr><td colspan="3" class="muted">No members.</td></tr>`}</tbody></table></div>
<div class="card" data-section="keys"><h2>API keys</h2><table><thead><tr><th>Name</th><th>Key</th><th>Owner</th><th>Project</th><th>State</th><th>Limits</th></tr></thead><tbody>
${keys.map((k) => html`<tr data-key-id="${k.id}"><td>${k.name ?? html`<span class="muted">unnamed</span>`}</td><td data-label="Key"><code>${k.prefix}…</code></td><td data-label="Owner">${k.userId ? users.get(k.userId) ?? k.userId : html`<span class="pill">organization-wide</span>`}</td>
<td data-label="Project">${k.projectId ? projectName.get(k.projectId) ?? '' : html`<span class="muted">any</span>`}</td><td data-label="State">${state(k)}</td><td data-label="Limits">${limits(k)}</td></tr>`)}
${keys.length ? '' : html`<tr><td colspan="6" class="muted">No API keys.</td></tr>`}</tbody></table></div>
<div class="card" data-section="projects"><h2>Projects</h2><table><thead><tr><th>Name</th><th>Slug</th><th>Budget</th><th>State</th></tr></thead><tbody>
${projects.map((p) => html`<tr><td>${p.name}</td><td data-label="Slug"><code class="id">${p.slug}</code></td><td data-label="Budget">${p.budgetMicros !== null && p.budgetMicros !== undefined ? budgetText(p.budgetMicros, p.budgetPeriod ?? 'total') : '—'}</td><td data-label="State">${p.archivedAt ? 'archived' : 'active'}</td></tr>`)}
${projects.length ? '' : html`<tr><td colspan="4" class="muted">No projects.</td></tr>`}</tbody></table></div>
<div class="card chart" data-section="usage"><h2>Usage, last 30 days</h2><p>${counted(t.requests, 'request')} · ${counted(t.input_tokens + t.output_tokens, 'token')} · ${usd(t.cost_micros / 1e6)}</p>${chart.svg}<div class="legend">${chart.legend}</div></div>
<div class="card" data-section="search"><h2>Web search</h2>${search ? html`<p>Default provider: ${search.defaultProvider ?? '—'} · allowed: ${search.allowedProviders.join(', ') || 'all'} · monthly allowance: ${search.monthlyAllowance ?? 'plan'} · overage: ${search.overageEnabled ? 'on' : 'off'} · monthly limit: ${search.overageMonthlyLimit ?? 'none'}</p>` : html`<p class="muted">Plan defaults (no settings saved).</p>`}</div>
<div class="card" data-section="lanes"><h2>Lane overrides</h2>${LANES_HINT}${laneOverridesForm(org, csrf, 'org', refusal)}</div>`);
}
