import type { Request, Response } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { isUuid } from '../../shared/uuid';
import { utcInstant } from '../../shared/utc-instant';
import { ApiKey, Project, User } from '../../shared/db/models';
import {
  LOG_COLUMNS, STATUS_FILTER, findRequestLog, listRequestLogs, requestLogCsv, type RequestLogFilter, type RequestLogRow,
} from '../../shared/metering/request-log-query';
import { html, type Html } from './html';
import { count, usdMicros, utcText } from './format';
import { fieldError, invalidAttrs, queryOrRefusal, type FormState } from './form-refusal';

/**
 * The Activity page of one organization (issue 32), for the dashboard (`/dashboard/o/:org/activity`)
 * and the operator console (`/orgs/:id/activity`): the request log newest first, filtered by key,
 * project, model, status and time range (GET forms: nothing is posted), PAGE_SIZE rows a page with
 * an "Older" cursor, each row opening its details, and `activity.csv` with the same query: the rows
 * of the page on screen, as CSV.
 */
/** A snake_case code that may wrap after its underscores (`missing_required_parameter` kept the Status column wide enough to push the table past 1280 px); copied, it reads the same. */
const breakAtUnderscores = (code: string): Html[] => code.split('_').map((part, i) => html`${i ? html`_<wbr>` : ''}${part}`);

export const PAGE_SIZE = 50;

const FILTERS = ['key', 'project', 'model', 'status', 'from', 'to'] as const;
const STATUSES: Array<[string, string]> = [['', 'Any status'], ['2xx', 'Succeeded (2xx)'], ['error', 'Failed (4xx, 5xx)'], ['4xx', '4xx'], ['5xx', '5xx'], ['429', '429 rate limited'], ['499', '499 cancelled']];
const DATETIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?$/;

/** The page's query: filters, cursor, and the values to put back in the form. */
export interface ActivityQuery {
  filter: Omit<RequestLogFilter, 'orgId'>;
  cursor?: string;
  values: Record<(typeof FILTERS)[number], string>;
}

/** Reads `?key=&project=&model=&status=&from=&to=&cursor=`; a bad value is 400 invalid_request naming it. */
export function activityQuery(query: Request['query']): ActivityQuery {
  const v = (name: string) => (typeof query[name] === 'string' ? String(query[name]).trim() : '');
  const values = { key: v('key'), project: v('project'), model: v('model').slice(0, 255), status: v('status'), from: v('from'), to: v('to') };
  const bad = (param: string, why: string) => new ApiError(400, 'invalid_request', `${param}: ${why}`, { param });
  for (const p of ['key', 'project'] as const) if (values[p] && !isUuid(values[p])) throw bad(p, `'${values[p].slice(0, 40)}' is not the id of a ${p} of this organization.`);
  if (values.status && !STATUS_FILTER.test(values.status)) throw bad('status', `'${values.status.slice(0, 40)}' is not a status filter: use a status (429), a class (2xx, 4xx, 5xx) or error.`);
  const instant = (p: 'from' | 'to') => {
    if (!values[p]) return undefined;
    // a date that does not exist (2026-02-31, 24:00) is refused, not rolled over by Date into another
    const t = utcInstant(values[p]);
    if (!DATETIME.test(values[p]) || !t) throw bad(p, `'${values[p].slice(0, 40)}' is not a UTC date and time (YYYY-MM-DDTHH:MM).`);
    return t;
  };
  const cursor = v('cursor') || undefined;
  return {
    filter: { apiKeyId: values.key || undefined, projectId: values.project || undefined, model: values.model || undefined, status: values.status || undefined, from: instant('from'), to: instant('to') },
    cursor,
    values,
  };
}

/**
 * The page's query, or the refusal its form shows (a browser sent a hand-edited or stale filter): the
 * page is then drawn at 400 with what was typed and the message beside the field, and no rows. A JSON
 * client, or the CSV export, gets the 400 through the one error handler as before.
 */
export function activityQueryOrRefusal(req: Request, res: Response): { q: ActivityQuery; refusal?: FormState } {
  const { value: q, refusal } = queryOrRefusal(req, res, FILTERS, () => activityQuery(req.query), (typed) => ({
    filter: {},
    values: Object.fromEntries(FILTERS.map((p) => [p, typed[p].slice(0, 255)])) as ActivityQuery['values'],
  }));
  return { q, refusal };
}

/** The rows of one page (also those of its CSV export). */
export function activityRows(orgId: string, q: ActivityQuery) {
  return listRequestLogs({ ...q.filter, orgId }, { limit: PAGE_SIZE, cursor: q.cursor });
}

/** `GET …/activity.csv`: the page's rows as CSV (an attachment). */
export async function sendActivityCsv(res: Response, orgId: string, q: ActivityQuery): Promise<void> {
  const page = await activityRows(orgId, q);
  res.type('text/csv').attachment(`activity-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.csv`).send(requestLogCsv(page.rows));
}

const search = (values: Record<string, string>, extra: Record<string, string> = {}) => {
  const p = new URLSearchParams(Object.entries({ ...values, ...extra }).filter(([, x]) => x !== ''));
  const s = p.toString();
  return s ? `?${s}` : '';
};

/** Labels for the org's keys and projects (the filters' options and the table's names). */
export async function activityLabels(orgId: string): Promise<{ keys: Map<string, string>; projects: Map<string, string> }> {
  const [keys, projects] = await Promise.all([
    ApiKey.findAll({ where: { orgId }, attributes: ['id', 'name', 'prefix'], order: [['createdAt', 'DESC']], limit: 500 }),
    Project.findAll({ where: { orgId }, attributes: ['id', 'name'], order: [['name', 'ASC']] }),
  ]);
  // as the usage page's table by key names them
  return { keys: new Map(keys.map((k) => [k.id, `${k.name ?? 'unnamed'} (${k.prefix}…)`])), projects: new Map(projects.map((p) => [p.id, p.name])) };
}

/**
 * The Activity page's body; `base` is the page's path (the CSV and the details are under it). With a
 * `refusal` (activityQueryOrRefusal) the form shows it and no rows are read.
 */
export async function activityBody(base: string, orgId: string, q: ActivityQuery, refusal?: FormState): Promise<Html> {
  const [page, labels] = await Promise.all([refusal ? { rows: [], next: undefined } : activityRows(orgId, q), activityLabels(orgId)]);
  const { values } = q;
  const option = (value: string, label: string, selected: string) => html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`;
  const keyName = (id: string | null) => (id ? labels.keys.get(id) ?? id : '—');
  return html`<h1>Activity</h1>
<div class="card"><form method="get" action="${base}" class="row" data-test="activity-filters">
<div><label for="akey">API key</label><select id="akey" name="key"${invalidAttrs(refusal, 'key')}>${option('', 'Any key', values.key)}${[...labels.keys].map(([id, label]) => option(id, label, values.key))}</select>${fieldError(refusal, 'key')}</div>
<div><label for="aproject">Project</label><select id="aproject" name="project"${invalidAttrs(refusal, 'project')}>${option('', 'Any project', values.project)}${[...labels.projects].map(([id, label]) => option(id, label, values.project))}</select>${fieldError(refusal, 'project')}</div>
<div><label for="amodel">Model</label><input type="text" id="amodel" name="model" value="${values.model}" maxlength="255" placeholder="any"></div>
<div><label for="astatus">Status</label><select id="astatus" name="status"${invalidAttrs(refusal, 'status')}>${STATUSES.map(([v, l]) => option(v, l, values.status))}</select>${fieldError(refusal, 'status')}</div>
<div><label for="afrom">From (UTC)</label><input type="datetime-local" id="afrom" name="from" value="${values.from}"${invalidAttrs(refusal, 'from')}>${fieldError(refusal, 'from')}</div>
<div><label for="ato">To (UTC)</label><input type="datetime-local" id="ato" name="to" value="${values.to}"${invalidAttrs(refusal, 'to')}>${fieldError(refusal, 'to')}</div>
<div><button type="submit">Filter</button></div></form>
<p class="muted">One row per request, newest first: metadata only, never prompts or outputs.${refusal ? '' : html` <a href="${base}.csv${search(values, q.cursor ? { cursor: q.cursor } : {})}" data-test="activity-csv" download>Export this page as CSV</a>`}</p></div>
<div class="card"><table data-test="activity"><thead><tr><th>Time (UTC)</th><th>Status</th><th>Model</th><th>Route</th><th>API key</th><th>Tokens in / out</th><th>Cost</th><th>Total</th></tr></thead><tbody>
${page.rows.map((r) => html`<tr data-request-id="${r.request_id}"><td data-label="Time"><a class="nowrap" href="${base}/${encodeURIComponent(r.request_id)}">${utcText(r.created_at, 'second')}</a></td>
<td data-label="Status"><span class="pill${r.status >= 400 ? ' on' : ''}">${r.status}</span> ${breakAtUnderscores(r.error_code ?? '')}</td><td data-label="Model" class="nowrap">${r.model || '—'}</td><td data-label="Route"><code>${r.route}</code>${r.stream ? ' (stream)' : ''}</td>
<td data-label="API key">${keyName(r.api_key_id)}</td><td data-label="Tokens">${count(r.input_tokens)} / ${count(r.output_tokens)}</td><td data-label="Cost">${usdMicros(r.cost_micros)}</td><td data-label="Total" class="nowrap">${r.total_ms === null ? '—' : `${count(r.total_ms)} ms`}</td></tr>`)}
${page.rows.length ? '' : html`<tr><td colspan="8" class="muted">${refusal ? 'Mend the filter above to see requests.' : 'No requests match.'}</td></tr>`}</tbody></table>
<p class="row">${q.cursor ? html`<a class="button-link" href="${base}${search(values)}" data-test="activity-newest">Newest</a>` : ''}${page.next ? html`<a class="button-link" href="${base}${search(values, { cursor: page.next })}" data-test="activity-older">Older</a>` : ''}</p></div>`;
}

const LABELS: Partial<Record<keyof RequestLogRow, string>> = {
  created_at: 'Received (UTC)', lane_ms: 'Time in the lane (ms)', queue_ms: 'Time in the queue (ms)', ttfb_ms: 'Time to first byte (ms)', total_ms: 'Total time (ms)',
  cost_micros: 'Cost (micro-USD)', api_key_id: 'API key', project_id: 'Project', user_id: 'User', batch_id: 'Batch',
};

/** One request's details: every column of its row; 404 when the org has no such request. */
export async function activityDetail(base: string, orgId: string, requestId: string): Promise<Html> {
  const row = await findRequestLog(requestId.slice(0, 255), orgId);
  if (!row) throw new ApiError(404, 'not_found', 'No such request in this organization’s log.');
  const [labels, user] = await Promise.all([activityLabels(orgId), row.user_id ? User.findByPk(row.user_id, { attributes: ['email'] }) : null]);
  // every value as the rest of the pages write it: names for ids, a friendly UTC time, yes/no
  const shown = (c: keyof RequestLogRow): string => {
    const v = row[c];
    if (c === 'created_at') return utcText(row.created_at, 'ms');
    if (c === 'api_key_id' && typeof v === 'string') return labels.keys.get(v) ?? v;
    if (c === 'project_id' && typeof v === 'string') return labels.projects.get(v) ?? v;
    if (c === 'user_id' && typeof v === 'string') return user?.email ?? v;
    if (c === 'cost_micros') return `${count(Number(v))} (${usdMicros(Number(v))})`;
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (v && typeof v === 'object') return Object.entries(v).map(([unit, n]) => `${unit.replace(/_/g, ' ')}: ${String(n)}`).join(', ') || '—';
    return v === null || v === undefined ? '—' : String(v);
  };
  return html`<h1>Request <code>${row.request_id}</code></h1>
<div class="card"><table data-test="activity-detail"><tbody>${LOG_COLUMNS.map((c) => html`<tr><th>${LABELS[c] ?? c.replace(/_/g, ' ')}</th><td data-field="${c}">${shown(c)}</td></tr>`)}</tbody></table>
<p><a href="${base}">Back to Activity</a></p></div>`;
}
