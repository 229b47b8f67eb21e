import type { RedisClient } from '../../shared/redis/connection';
import type { Project } from '../../shared/db/models';
import { validControls, type KeyControlsInput } from '../../shared/limits/key-input';
import { budgetStatus } from '../../shared/limits/limits';
import { html, type Html } from '../web/html';
import { fieldError, invalidAttrs, typed, type FormState } from '../web/form-refusal';
import { budgetFigures } from '../web/format';
import { controlRefusal } from './key-controls-form';

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/** The projects page's budget form as the API's fields: a blank amount removes the budget; 400 naming the field. */
export function projectBudgetFromForm(body: Record<string, unknown> | undefined): Pick<KeyControlsInput, 'budget_usd' | 'budget_period'> {
  const amount = text(body?.budget_usd);
  const input = { budget_usd: amount === '' ? null : Number(amount), ...(text(body?.budget_period) ? { budget_period: text(body?.budget_period) as KeyControlsInput['budget_period'] } : {}) };
  try {
    validControls(input);
  } catch (err) {
    throw controlRefusal(err as Error, 'budget_usd');
  }
  return input;
}

/** A project's budget: spent, reserved and remaining of its limit, or "none". */
export async function projectBudgetCell(redis: RedisClient, p: Project): Promise<Html> {
  if (p.budgetMicros === null) return html`<td data-label="Budget" data-test="project-budget">none</td>`;
  const b = await budgetStatus(redis, p.orgId, 'project', p.id, { micros: p.budgetMicros, period: p.budgetPeriod ?? 'month' });
  return html`<td data-label="Budget" data-test="project-budget">${budgetFigures(b)}</td>`;
}

/** An owner's form that sets a project's budget (blank: none), filled with its values or as typed when refused. */
export function projectBudgetForm(orgSlug: string, p: Project, csrf: string, state?: FormState): Html {
  const id = (name: string) => `${name}-${p.id}`;
  const amount = typed(state, 'budget_usd', p.budgetMicros === null ? '' : String(p.budgetMicros / 1_000_000));
  const period = typed(state, 'budget_period', p.budgetPeriod ?? 'month');
  return html`<form class="row fields" method="post" action="/dashboard/o/${orgSlug}/projects/${p.id}/budget" data-test="project-budget-form"><input type="hidden" name="_csrf" value="${csrf}">
<div><label for="${id('budget_usd')}">Budget (USD)</label><input type="number" min="0" step="any" id="${id('budget_usd')}" name="budget_usd" value="${amount}" placeholder="none"${invalidAttrs(state, 'budget_usd')}>${fieldError(state, 'budget_usd')}</div>
<div><label for="${id('budget_period')}">per</label><select id="${id('budget_period')}" name="budget_period"${invalidAttrs(state, 'budget_period')}>${(['day', 'month', 'total'] as const).map((x) => html`<option value="${x}"${period === x ? html` selected` : ''}>${x}</option>`)}</select>${fieldError(state, 'budget_period')}</div>
<div><button type="submit">Save budget</button></div></form>`;
}
