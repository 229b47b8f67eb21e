import type { RedisClient } from '../../shared/redis/connection';
import type { Membership } from '../../shared/db/models';
import { budgetStatus } from '../../shared/limits/limits';
import { memberLimitsView } from '../../shared/limits/key-input';
import { html, type Html } from '../web/html';
import { budgetFigures, count, perPeriod, rateText, usd } from '../web/format';
import type { FormState } from '../web/form-refusal';
import { controlFields } from './key-controls-form';

type MemberBudget = Awaited<ReturnType<typeof budgetStatus>> | null;

/** The member's budget figures (spent, reserved, left), null when they have none. */
export function memberBudget(redis: RedisClient, m: Membership): Promise<MemberBudget> {
  return m.budgetMicros === null ? Promise.resolve(null) : budgetStatus(redis, m.orgId, 'member', m.userId, { micros: m.budgetMicros, period: m.budgetPeriod ?? 'month' });
}

/**
 * A member's limits on the members page (owners only; docs/keys.md "Member limits"): what is set,
 * the budget's spend, and a form like a key's "Edit limits" (a blank field clears that limit). They
 * apply to every key the member owns in the org, on top of each key's own.
 */
export function memberLimitsCell(action: string, m: Membership, email: string, b: MemberBudget, csrf: string, refusal?: FormState): Html {
  const v = memberLimitsView(m);
  return html`<td data-label="Limits" class="figures"><span class="muted">Models:</span> <span data-test="member-models">${v.allowed_models ? v.allowed_models.join(', ') : 'all'}</span><br><span class="muted">Rate:</span> <span data-test="member-rate">${rateText(v.rpm, v.tpm)}</span><br>
<span class="muted">Budget:</span> <span data-test="member-budget">${b ? budgetFigures(b) : 'none'}</span>
<details${refusal ? html` open` : ''}><summary>Edit limits of ${email}</summary><p class="muted">On every key ${email} owns in this organization, on top of each key's own limits; rates and budget are counted over all those keys together. A blank field removes that limit.</p>
<form method="post" action="${action}" class="row"><input type="hidden" name="_csrf" value="${csrf}">${controlFields({ id: m.userId, ...v }, refusal, false)}<div><button type="submit">Save limits</button></div></form></details></td>`;
}

/** On the keys page, to the member themselves: the limits an owner set on them, which every key they make carries. */
export function ownLimitsNote(m: Membership | null): Html | '' {
  const v = m ? memberLimitsView(m) : null;
  if (!v || (!v.allowed_models && !v.rpm && !v.tpm && v.budget_usd === null)) return '';
  const parts = [v.allowed_models ? `models ${v.allowed_models.join(', ') || 'none'}` : '', v.rpm ? `${count(v.rpm)} requests/min` : '', v.tpm ? `${count(v.tpm)} tokens/min` : '', v.budget_usd !== null ? `a budget of ${usd(v.budget_usd)} ${perPeriod(v.budget_period!)}` : ''];
  return html`<p data-test="own-limits">An owner limits you in this organization, over all your keys together and on top of each key's own limits: ${parts.filter(Boolean).join('; ')}.</p>`;
}
