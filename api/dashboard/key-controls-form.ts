import type { RedisClient } from '../../shared/redis/connection';
import { ApiError } from '../../shared/errors/ApiError';
import { validControls, validMemberLimits, type KeyControlsInput, type KeyControlsRow, type MemberLimitsRow } from '../../shared/limits/key-input';
import { budgetStatus } from '../../shared/limits/limits';
import { listApiKeys } from '../../shared/tenancy/ops';
import { html, type Html } from '../web/html';
import { budgetFigures, rateText, utcText } from '../web/format';
import { fieldError, invalidAttrs, typed, type FormState } from '../web/form-refusal';

type Listed = Awaited<ReturnType<typeof listApiKeys>>[number];

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/**
 * The controls of the keys page's forms (docs/keys.md). On the create form a blank field sets
 * nothing; on a key's edit form a blank field clears that control. A refusal is 400
 * invalid_request naming the field.
 */
export function controlsFromForm(body: Record<string, unknown> | undefined): KeyControlsRow {
  return fromForm(body, validControls, true);
}

/** A member's limits from the members page's form, as controlsFromForm (a blank field clears; no expiry). */
export function memberLimitsFromForm(body: Record<string, unknown> | undefined): MemberLimitsRow {
  return fromForm(body, validMemberLimits, false);
}

function fromForm(body: Record<string, unknown> | undefined, valid: (input: KeyControlsInput) => KeyControlsRow, expiry: boolean): KeyControlsRow {
  const f = body ?? {};
  const input: KeyControlsInput = {};
  const num = (v: string) => (v === '' ? null : Number(v));
  input.allowed_models = text(f.models) === '' ? null : text(f.models).split(',').map((s) => s.trim()).filter(Boolean);
  input.rpm = num(text(f.rpm));
  input.tpm = num(text(f.tpm));
  input.budget_usd = num(text(f.budget_usd));
  if (text(f.budget_period)) input.budget_period = text(f.budget_period) as KeyControlsInput['budget_period'];
  if (expiry) input.expires_at = text(f.expires_at) === '' ? null : text(f.expires_at);
  try {
    return valid(input);
  } catch (err) {
    throw controlRefusal(err as Error);
  }
}

/** The forms' names for the fields Joi names (`"rpm" must be …`). */
const LABELS: Record<string, string> = { allowed_models: 'Allowed models', rpm: 'Requests/min', tpm: 'Tokens/min', budget_usd: 'Budget (USD)', budget_period: 'The budget period', expires_at: 'Expires' };

/**
 * A refused control as a form shows it: 400 invalid_request naming the form's field (Joi names it
 * first: "rpm" must be …), in the words of the form's label, not the API's field name.
 */
export function controlRefusal(err: Error, fallback?: string): ApiError {
  const field = /^"(\w+)"/.exec(err.message)?.[1] ?? fallback;
  const message = err.message.replace(/^"(\w+)"/, (quoted, f: string) => LABELS[f] ?? quoted).replace('must be in iso format', 'must be an ISO 8601 date, such as 2027-01-31');
  return new ApiError(400, 'invalid_request', message, { param: field === 'allowed_models' ? 'models' : field });
}

/** What the controls' inputs show: a key's (listed) or a member's limits (id: the user's; no expiry). */
type ControlValues = Pick<Listed, 'id' | 'allowed_models' | 'rpm' | 'tpm' | 'budget_usd' | 'budget_period'> & { expires_at?: string | null };

/**
 * The controls' inputs, filled with a key's or a member's values (edit), or empty or as typed in a
 * refused create form. `expiry`: false on a member's form (a member has no expiry).
 */
export function controlFields(k?: ControlValues, state?: FormState, expiry = true): Html {
  const v = (x: unknown) => (x === null || x === undefined ? '' : String(x));
  const id = (name: string) => (k ? `${name}-${k.id}` : name);
  const f = (name: string, fallback: unknown) => typed(state, name, v(fallback));
  return html`<div><label for="${id('models')}">Allowed models</label><input type="text" id="${id('models')}" name="models" value="${f('models', k?.allowed_models?.join(','))}" placeholder="all (or a,b)"${invalidAttrs(state, 'models')}>${fieldError(state, 'models')}</div>
<div><label for="${id('rpm')}">Requests/min</label><input type="number" min="1" id="${id('rpm')}" name="rpm" value="${f('rpm', k?.rpm)}" placeholder="no limit"${invalidAttrs(state, 'rpm')}>${fieldError(state, 'rpm')}</div>
<div><label for="${id('tpm')}">Tokens/min</label><input type="number" min="1" id="${id('tpm')}" name="tpm" value="${f('tpm', k?.tpm)}" placeholder="no limit"${invalidAttrs(state, 'tpm')}>${fieldError(state, 'tpm')}</div>
<div><label for="${id('budget_usd')}">Budget (USD)</label><input type="number" min="0" step="any" id="${id('budget_usd')}" name="budget_usd" value="${f('budget_usd', k?.budget_usd)}" placeholder="none"${invalidAttrs(state, 'budget_usd')}>${fieldError(state, 'budget_usd')}</div>
<div><label for="${id('budget_period')}">per</label><select id="${id('budget_period')}" name="budget_period">${(['day', 'month', 'total'] as const).map((p) => html`<option value="${p}"${f('budget_period', k?.budget_period ?? 'month') === p ? html` selected` : ''}>${p}</option>`)}</select>${fieldError(state, 'budget_period')}</div>
${expiry ? html`<div><label for="${id('expires_at')}">Expires (ISO date)</label><input type="text" id="${id('expires_at')}" name="expires_at" value="${f('expires_at', k?.expires_at)}" placeholder="never"${invalidAttrs(state, 'expires_at')}>${fieldError(state, 'expires_at')}</div>` : ''}`;
}

/**
 * A key's figures for the table, in one cell of labelled lines (allowed models, rate limits, spend
 * against budget, expiry): four columns of their own made the table wider than a laptop's screen.
 */
export async function controlCells(redis: RedisClient, orgId: string, k: Listed): Promise<Html> {
  const b = k.budget_usd === null ? null : await budgetStatus(redis, orgId, 'key', k.id, { micros: Math.round(k.budget_usd * 1e6), period: k.budget_period! });
  return html`<td class="figures"><span class="muted">Models:</span> <span data-test="key-models">${k.allowed_models ? k.allowed_models.join(', ') : 'all'}</span><br><span class="muted">Rate:</span> <span data-test="key-rate">${rateText(k.rpm, k.tpm)}</span><br>
<span class="muted">Budget:</span> <span data-test="key-budget">${b ? budgetFigures(b) : 'none'}</span><br>
<span class="muted">Expires:</span> <span data-test="key-expires">${k.expires_at ? utcText(k.expires_at) : 'never'}</span></td>`;
}
