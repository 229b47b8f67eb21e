import type { Request, Response } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { addDays, utcDay } from '../../shared/metering/rollups';
import { utcInstant } from '../../shared/utc-instant';
import { usageBreakdown, type BreakdownRow } from '../../shared/billing/usage-breakdown';
import { html } from '../web/html';
import { count, counted, usd, usdMicros } from '../web/format';
import type { WebKit } from '../web/session';
import { dollarAxis, stackedBars } from './chart';
import { orgUsageBetween } from './usage';
import { renderOrgPage } from './org-page';
import { fieldError, invalidAttrs, queryOrRefusal, typed } from '../web/form-refusal';

/** The range to show: the one asked for, or (a browser's refused range) the default range with the refusal for the form (queryOrRefusal). */
const rangeOrRefusal = (req: Request, res: Response) => queryOrRefusal(req, res, ['from', 'to'], () => usageRange(req.query), () => usageRange({}));

/** The longest range the usage page shows at once, in days. */
export const MAX_RANGE_DAYS = 366;
const DEFAULT_DAYS = 30;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const EARLIEST = '1970-01-01';

const notADate = (name: string, v: string) => new ApiError(400, 'invalid_request', `${name}: '${v.slice(0, 40)}' is not a date (YYYY-MM-DD).`, { param: name });

/**
 * The page's range from `?from=&to=` (UTC days, both inclusive): by default the last 30 days ending
 * today; both on or after 1970-01-01, `to` not after today, `from` not after `to`, at most MAX_RANGE_DAYS days. A bad value is 400
 * invalid_request naming the field. Returns `[from, end)` with `end` exclusive.
 */
export function usageRange(query: Request['query']): { from: string; to: string; end: string } {
  const today = utcDay(new Date());
  const day = (name: 'from' | 'to', fallback: string): string => {
    const v = typeof query[name] === 'string' ? String(query[name]).trim() : '';
    if (v === '') return fallback;
    if (!DAY.test(v)) throw notADate(name, v);
    // no usage is older than the epoch; the default range ending in year 1 began in year 0, which PostgreSQL refuses
    if (v < EARLIEST) throw new ApiError(400, 'invalid_request', `${name}: ${v} is before ${EARLIEST}.`, { param: name });
    // a day that exists (not 2026-02-30): shared/utc-instant.ts reads it back
    if (!utcInstant(v)) throw notADate(name, v);
    return v;
  };
  const to = day('to', today);
  const from = day('from', addDays(to, -(DEFAULT_DAYS - 1)));
  if (to > today) throw new ApiError(400, 'invalid_request', `to: ${to} is in the future (today is ${today} UTC).`, { param: 'to' });
  if (from > to) throw new ApiError(400, 'invalid_request', `from: ${from} is after to (${to}).`, { param: 'from' });
  if (addDays(from, MAX_RANGE_DAYS) <= to) throw new ApiError(400, 'invalid_request', `from: the range may span at most ${MAX_RANGE_DAYS} days.`, { param: 'from' });
  return { from, to, end: addDays(to, 1) };
}

function breakdownTable(test: string, what: string, rows: BreakdownRow[]) {
  return html`<table data-test="${test}"><thead><tr><th>${what}</th><th>Requests</th><th>Input tokens</th><th>Output tokens</th><th>Cost</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td data-label="${what}">${r.label}</td><td data-label="Requests">${count(r.requests)}</td><td data-label="Input tokens">${count(r.inputTokens)}</td><td data-label="Output tokens">${count(r.outputTokens)}</td><td data-label="Cost">${usdMicros(r.costMicros)}</td></tr>`)}
${rows.length ? '' : html`<tr><td colspan="5" class="muted">No traffic in this range.</td></tr>`}</tbody></table>`;
}

/** `GET /dashboard/o/{org}`: usage over a date range, as charts and per model, key and project. */
export function usagePage(kit: WebKit) {
  return async (req: Request, res: Response): Promise<void> => {
    const { value: { from, to, end }, refusal } = rangeOrRefusal(req, res);
    const orgId = res.locals.access!.org.id;
    const [usage, byKey, byProject] = await Promise.all([
      orgUsageBetween(orgId, from, end), usageBreakdown(orgId, from, end, 'key'), usageBreakdown(orgId, from, end, 'project'),
    ]);
    const series = (value: (r: (typeof usage.rows)[number]) => number) => {
      const m = new Map<string, Map<string, number>>();
      for (const row of usage.rows) {
        const label = `${row.model} (${row.modality})`;
        const values = m.get(label) ?? m.set(label, new Map()).get(label)!;
        values.set(row.day, (values.get(row.day) ?? 0) + value(row));
      }
      return [...m].map(([label, values]) => ({ label, values }));
    };
    const req1 = stackedBars({ from, to: end, title: 'Requests per day', series: series((r) => r.requests) });
    const tok = stackedBars({ from, to: end, title: 'Tokens per day', series: series((r) => r.inputTokens + r.outputTokens) });
    const cost = stackedBars({ from, to: end, title: 'Cost per day (USD)', series: series((r) => r.costMicros / 1e6), format: usd, axis: dollarAxis });
    const totals = new Map<string, { requests: number; input: number; output: number; audio: number; cost: number }>();
    for (const row of usage.rows) {
      const t = totals.get(`${row.model}\u0000${row.modality}`) ?? { requests: 0, input: 0, output: 0, audio: 0, cost: 0 };
      t.requests += row.requests; t.input += row.inputTokens; t.output += row.outputTokens; t.audio += row.audioSeconds; t.cost += row.costMicros;
      totals.set(`${row.model}\u0000${row.modality}`, t);
    }
    const t = usage.totals;
    renderOrgPage(req, res, kit, 'Usage', 'usage', () => html`<h1>Usage, ${from} to ${to} (UTC)</h1>
<div class="card"><form method="get" action="/dashboard/o/${res.locals.access!.org.slug}" class="row" data-test="usage-range">
<div><label for="ufrom">From</label><input type="date" id="ufrom" name="from" value="${typed(refusal, 'from', from)}" max="${to}" required${invalidAttrs(refusal, 'from')}>${fieldError(refusal, 'from')}</div>
<div><label for="uto">To</label><input type="date" id="uto" name="to" value="${typed(refusal, 'to', to)}" max="${utcDay(new Date())}" required${invalidAttrs(refusal, 'to')}>${fieldError(refusal, 'to')}</div>
<div><button type="submit">Show</button></div></form>
<p class="muted">At most ${MAX_RANGE_DAYS} days; UTC days, both included. Totals: <strong data-test="usage-total-requests">${count(t.requests)}</strong> ${t.requests === 1 ? 'request' : 'requests'}, ${counted(t.input_tokens + t.output_tokens, 'token')}, <strong data-test="usage-total-cost">${usdMicros(t.cost_micros)}</strong>. ${t.requests ? 'Hover (or tap) a bar for its figure.' : 'No traffic in this range: the charts are empty.'}</p></div>
<div class="card chart" data-test="requests-chart"><h2>Requests per day</h2>${req1.svg}<div class="legend">${req1.legend}</div></div>
<div class="card chart"><h2>Tokens per day (input + output)</h2>${tok.svg}<div class="legend">${tok.legend}</div></div>
<div class="card chart"><h2>Cost per day (USD, list prices)</h2>${cost.svg}<div class="legend">${cost.legend}</div></div>
<div class="card"><h2>By model and modality</h2><table data-test="usage-totals"><thead><tr><th>Model</th><th>Modality</th><th>Requests</th><th>Input tokens</th><th>Output tokens</th><th>Audio seconds</th><th>Cost</th></tr></thead><tbody>
${[...totals].map(([k, x]) => { const [model, modality] = k.split('\u0000'); return html`<tr><td data-label="Model">${model}</td><td data-label="Modality">${modality}</td><td data-label="Requests">${count(x.requests)}</td><td data-label="Input tokens">${count(x.input)}</td><td data-label="Output tokens">${count(x.output)}</td><td data-label="Audio seconds">${count(x.audio)}</td><td data-label="Cost">${usdMicros(x.cost)}</td></tr>`; })}
${totals.size ? '' : html`<tr><td colspan="7" class="muted">No traffic in this range.</td></tr>`}</tbody></table>
<p class="muted">Cost: tokens and audio seconds at each model's list prices, images at their recorded price, web searches at the overage charged (allowance and own-key searches are free); the same figures as <code>GET /admin/v1/billing/usage</code>.</p></div>
<div class="card"><h2>By API key</h2>${breakdownTable('usage-by-key', 'API key', byKey)}</div>
<div class="card"><h2>By project</h2>${breakdownTable('usage-by-project', 'Project', byProject)}</div>`);
  };
}
