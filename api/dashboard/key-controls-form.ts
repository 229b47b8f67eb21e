import type { RedisClient } from '../../shared/redis/connection';
import { ApiError } from '../../shared/errors/ApiError';
import { validControls, type KeyControlsInput, type KeyControlsRow } from '../../shared/limits/key-input';
import { budgetStatus } from '../../shared/limits/limits';
import { listApiKeys } from '../../shared/tenancy/ops';
import { html, type Html } from '../web/html';
import { fieldError, invalidAttrs, typed, type FormState } from '../web/form-refusal';

type Listed = Awaited<ReturnType<typeof listApiKeys>>[number];

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/**
 * The controls of the keys page's forms (docs/keys.md). On the create form a blank field sets
 * nothing; on a key's edit form a blank field clears that control. A refusal is 400
 * invalid_request naming the field.
 */
export function controlsFromForm(body: Record<string, unknown> | undefined): KeyControlsRow {
  const f = body ?? {};
  const input: KeyControlsInput = {};
  const num = (v: string) => (v === '' ? null : Number(v));
  input.allowed_models = text(f.models) === '' ? null : text(f.models).split(',').map((s) => s.trim()).filter(Boolean);
  input.rpm = num(text(f.rpm));
  input.tpm = num(text(f.tpm));
  input.budget_usd = num(text(f.budget_usd));
  if (text(f.budget_period)) input.budget_period = text(f.budget_period) as KeyControlsInput['budget_period'];
  input.expires_at = text(f.expires_at) === '' ? null : text(f.expires_at);
  try {
    return validControls(input);
  } catch (err) {
    // Joi names the field first ("rpm" must be …): the form's field of that name is at fault
    const field = /^"(\w+)/.exec((err as Error).message)?.[1];
    throw new ApiError(400, 'invalid_request', (err as Error).message, { param: field === 'allowed_models' ? 'models' : field });
  }
}

/** The controls' inputs, filled with a key's values (edit), or empty or as typed in a refused create form. */
export function controlFields(k?: Listed, state?: FormState): Html {
  const v = (x: unknown) => (x === null || x === undefined ? '' : String(x));
  const id = (name: string) => (k ? `${name}-${k.id}` : name);
  const f = (name: string, fallback: unknown) => typed(state, name, v(fallback));
  return html`<div><label for="${id('models')}">Allowed models</label><input type="text" id="${id('models')}" name="models" value="${f('models', k?.allowed_models?.join(','))}" placeholder="all (or a,b)"${invalidAttrs(state, 'models')}>${fieldError(state, 'models')}</div>
<div><label for="${id('rpm')}">Requests/min</label><input type="number" min="1" id="${id('rpm')}" name="rpm" value="${f('rpm', k?.rpm)}" placeholder="no limit"${invalidAttrs(state, 'rpm')}>${fieldError(state, 'rpm')}</div>
<div><label for="${id('tpm')}">Tokens/min</label><input type="number" min="1" id="${id('tpm')}" name="tpm" value="${f('tpm', k?.tpm)}" placeholder="no limit"${invalidAttrs(state, 'tpm')}>${fieldError(state, 'tpm')}</div>
<div><label for="${id('budget_usd')}">Budget (USD)</label><input type="number" min="0" step="any" id="${id('budget_usd')}" name="budget_usd" value="${f('budget_usd', k?.budget_usd)}" placeholder="none"${invalidAttrs(state, 'budget_usd')}>${fieldError(state, 'budget_usd')}</div>
<div><label for="${id('budget_period')}">per</label><select id="${id('budget_period')}" name="budget_period">${(['day', 'month', 'total'] as const).map((p) => html`<option value="${p}"${f('budget_period', k?.budget_period ?? 'month') === p ? html` selected` : ''}>${p}</option>`)}</select>${fieldError(state, 'budget_period')}</div>
<div><label for="${id('expires_at')}">Expires (ISO date)</label><input type="text" id="${id('expires_at')}" name="expires_at" value="${f('expires_at', k?.expires_at)}" placeholder="never"${invalidAttrs(state, 'expires_at')}>${fieldError(state, 'expires_at')}</div>`;
}

/** Dollars for the pages; small figures keep their micro-dollars (a test key's spend is a few millionths). */
export const usd = (x: number) => (x === 0 ? '$0' : x < 0.01 ? `$${x.toFixed(6)}` : `$${x.toFixed(2)}`);

/** A key's figures for the table: limits, spend against budget, expiry. */
export async function controlCells(redis: RedisClient, orgId: string, k: Listed): Promise<Html> {
  const b = k.budget_usd === null ? null : await budgetStatus(redis, orgId, 'key', k.id, { micros: Math.round(k.budget_usd * 1e6), period: k.budget_period! });
  const limits = [k.rpm ? `${k.rpm} req/min` : '', k.tpm ? `${k.tpm} tok/min` : ''].filter(Boolean).join(', ') || 'none';
  return html`<td data-label="Models" data-test="key-models">${k.allowed_models ? k.allowed_models.join(', ') : 'all'}</td><td data-label="Limits">${limits}</td>
<td data-label="Budget" data-test="key-budget">${b ? html`${usd(b.spent_usd)} spent, ${usd(b.reserved_usd)} reserved of ${usd(b.limit_usd)} per ${b.period}; ${usd(b.remaining_usd)} left` : 'none'}</td>
<td data-label="Expires">${k.expires_at ? k.expires_at.slice(0, 16).replace('T', ' ') : 'never'}</td>`;
}
