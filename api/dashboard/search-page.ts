import { Router, type Request, type Response } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import { Membership, SearchProvider, SearchSetting, User } from '../../shared/db/models';
import { ApiError } from '../../shared/errors/ApiError';
import { checkOverageTerms, listOrgSearchKeys, removeOrgSearchKey, setMemberSearch, setMonthlyLimit, setOrgSearchKey, setOverage, type SettingsWrite } from '../../shared/search/settings';
import { orgSearchTerms } from '../../shared/search/resolve';
import type { Directory } from '../../shared/tenancy/directory';
import { html } from '../web/html';
import type { WebKit } from '../web/session';
import { refuseImpersonation, requireOwner } from './member';
import { actorOf, renderOrgPage } from './org-page';
import { confirmedAction } from '../web/confirm';
import { count as figure, utcText } from '../web/format';
import { fieldError, formOf, invalidAttrs, savedNotice, ticked, typed, withFormRefusal, type FormState } from '../web/form-refusal';

/** What each save says when it is done (`?saved=`). */
const SAVED: Record<string, string> = {
  'overage-on': 'Paid overage is on.',
  'overage-off': 'Paid overage is off.',
  limit: 'Monthly limit saved.',
  member: "Member's search settings saved.",
  key: 'Provider key set.',
  'key-removed': 'Provider key removed.',
};

const dollars = (micros: number) => `$${(micros / 1e6).toFixed(micros % 10_000 ? 4 : 2)}`;

/** A count from a form field: a whole number, or null when `allowEmpty` and blank. 400 otherwise. */
function count(v: unknown, field: string, allowEmpty: boolean): number | null {
  const s = String(v ?? '').trim();
  if (!s && allowEmpty) return null;
  if (!/^\d{1,9}$/.test(s)) throw new ApiError(400, 'invalid_request', `${field} must be a whole number${allowEmpty ? ' or empty' : ''}.`);
  return Number(s);
}

/**
 * The web search page of an organization, owners only (others: 403 and no link). Every write goes
 * through shared/search/settings.ts (the same code as the management API and `gateway search-keys`),
 * which audits it. Enabling paid overage takes a confirmation step; disabling is immediate.
 */
export function searchPage(deps: { redis: RedisClient; directory: Directory }, kit: WebKit): Router {
  const r = Router({ mergeParams: true });
  r.use(requireOwner);
  // The spec gives these decisions to an owner (overage: one who confirms the dialog): an operator
  // impersonating an owner only looks, as with key creation.
  r.use((req, res, next) => (req.method === 'GET' || req.method === 'HEAD' ? next() : refuseImpersonation(req, res, next)));
  const base = (res: Response) => `/dashboard/o/${res.locals.access!.org.slug}/search`;
  const write = (req: Request, res: Response, what: string): SettingsWrite => ({
    redis: deps.redis, actor: actorOf(res), via: { method: 'POST', path: `${base(res)}/${what}` }, requestId: req.id,
  });

  /** The page; `refusal` is a refused form's state (FormState.form: overage, limit, member:<id>, keys). */
  const show = async (req: Request, res: Response, confirm?: { monthlyLimit: number }, refusal?: FormState) => {
    const org = res.locals.access!.org;
    await deps.directory.sync();
    const terms = await orgSearchTerms(deps.directory, (await deps.directory.org(org.id))!);
    const setting = await SearchSetting.findOne({ where: { orgId: org.id } });
    const allowed = setting?.allowedProviders ?? [];
    const providers = (await SearchProvider.findAll({ where: { enabled: true }, order: [['name', 'ASC']] })).filter((p) => !allowed.length || allowed.includes(p.name));
    const members = await Membership.findAll({ where: { orgId: org.id } });
    const users = await User.findAll({ where: { id: members.map((m) => m.userId) } });
    const keys = await listOrgSearchKeys(org.id);
    const b = base(res);
    const [ov, lim, keyForm] = [formOf(refusal, 'overage'), formOf(refusal, 'limit'), formOf(refusal, 'keys')];
    renderOrgPage(req, res, kit, 'Web search', 'search', (csrf) => {
      const hidden = html`<input type="hidden" name="_csrf" value="${csrf}">`;
      return html`<h1>Web search</h1>
${refusal ? '' : savedNotice(SAVED[String(req.query.saved ?? '')])}
<div class="card" data-test="overage"><h2>Paid overage</h2>
<p>Free allowance: <strong>${figure(terms.allowance)}</strong> searches a month. Paid overage is <strong data-test="overage-state">${terms.overageEnabled ? 'on' : 'off'}</strong>${terms.monthlyLimit !== null ? html`, monthly limit <strong>${figure(terms.monthlyLimit)}</strong> searches` : ''}.</p>
${terms.overageEnabled
  ? html`<form method="post" action="${b}/overage">${hidden}<input type="hidden" name="enabled" value="false"><button class="danger">Disable overage</button></form>`
  : html`<p class="muted">The monthly limit counts every search, so it must be above the free allowance (${figure(terms.allowance)}) for any paid search to happen.</p>
<form method="post" action="${b}/overage" class="row">${hidden}<input type="hidden" name="enabled" value="true">
<div><label for="olimit">Monthly limit (searches)</label><input type="text" inputmode="numeric" id="olimit" name="monthly_limit" value="${typed(ov, 'monthly_limit', String(terms.monthlyLimit ?? ''))}" required${invalidAttrs(ov, 'monthly_limit')}>${fieldError(ov, 'monthly_limit')}</div><div><button>Enable overage…</button></div></form>`}</div>
${confirm ? html`<dialog open class="card confirm" data-test="overage-dialog" aria-labelledby="dlg-title"><h2 id="dlg-title">Turn on paid overage?</h2>
<p>Your free allowance is <strong>${figure(terms.allowance)}</strong> searches a month. Past it, each search is charged at its provider's price:</p>
<ul>${providers.map((p) => html`<li>${p.name}: ${dollars(Number(p.priceMicros))} per search</li>`)}</ul>
<p>Searches stop at your monthly limit of <strong>${figure(confirm.monthlyLimit)}</strong>.</p>
<div class="row"><form method="post" action="${b}/overage">${hidden}<input type="hidden" name="enabled" value="true"><input type="hidden" name="monthly_limit" value="${confirm.monthlyLimit}"><input type="hidden" name="confirm" value="yes"><button>Confirm</button></form>
<a href="${b}" class="button-link" data-test="overage-cancel">Cancel</a></div></dialog>` : ''}
<div class="card"><h2>Monthly limit</h2><p class="muted">All searches of the organization in a month, platform and own keys. Empty: no limit (not while overage is on).</p>
<form method="post" action="${b}/limit" class="row">${hidden}<div><label for="limit">Monthly limit (searches)</label><input type="text" inputmode="numeric" id="limit" name="monthly_limit" value="${typed(lim, 'monthly_limit', String(terms.monthlyLimit ?? ''))}"${invalidAttrs(lim, 'monthly_limit')}>${fieldError(lim, 'monthly_limit')}</div><div><button>Save limit</button></div></form></div>
<div class="card"><h2>Members</h2><p class="muted">A member's cap (empty inherits the organization's limit) and whether they may search.</p>
<table><thead><tr><th>Member</th><th>Role</th><th>Cap</th><th>Search</th><th></th></tr></thead><tbody>
${members.map((m) => { const u = users.find((x) => x.id === m.userId); const f = `member-${m.userId}`; const st = formOf(refusal, `member:${m.userId}`); return html`<tr data-member="${u?.email ?? m.userId}"><td data-label="Member">${u?.email ?? m.userId}</td><td data-label="Role">${m.role}</td>
<td data-label="Cap"><input form="${f}" type="text" inputmode="numeric" name="cap" value="${typed(st, 'cap', String(m.searchCap ?? ''))}" placeholder="inherit" aria-label="Cap for ${u?.email ?? ''}"${invalidAttrs(st, 'cap')}>${fieldError(st, 'cap')}</td>
<td data-label="Search"><label><input form="${f}" type="checkbox" name="enabled" value="true" ${ticked(st, 'enabled', 'true', m.searchEnabled) ? html`checked` : ''}> on<span class="sr-only"> for ${u?.email ?? ''}</span></label></td>
<td><form id="${f}" method="post" action="${b}/members/${m.userId}">${hidden}<button class="plain">Save<span class="sr-only"> the search settings of ${u?.email ?? ''}</span></button></form></td></tr>`; })}
</tbody></table></div>
<div class="card"><h2>Provider keys</h2><p class="muted">Searches with the organization's own key are not charged and do not use the allowance. A key is never shown again: only its last four characters.</p>
<table><thead><tr><th>Provider</th><th>Key</th><th>Set</th><th></th></tr></thead><tbody>
${keys.map((k) => html`<tr data-provider-key="${k.provider}"><td data-label="Provider">${k.provider}</td><td data-label="Key"><code>…${k.last4}</code></td><td data-label="Set">${utcText(k.created_at, 'day')}</td><td>${confirmedAction({ action: `${b}/keys/${k.provider}/remove`, csrf, label: 'Remove…', confirm: `Remove the ${k.provider} key`, question: html`Searches with ${k.provider} use the platform's key from then on: they count against the allowance and may be charged. The key is not kept: to use it again, type it again.` })}</td></tr>`)}
${keys.length ? '' : html`<tr><td colspan="4" class="muted">No own keys.</td></tr>`}</tbody></table>
<form method="post" action="${b}/keys" class="row">${hidden}<div><label for="kprov">Provider</label><select id="kprov" name="provider"${invalidAttrs(keyForm, 'provider')}>${providers.map((p) => html`<option${typed(keyForm, 'provider') === p.name ? html` selected` : ''}>${p.name}</option>`)}</select>${fieldError(keyForm, 'provider')}</div>
<div><label for="kkey">API key</label><input type="password" id="kkey" name="api_key" autocomplete="off" required${invalidAttrs(keyForm, 'api_key')}>${fieldError(keyForm, 'api_key')}${keyForm?.field === 'api_key' ? html`<p class="muted">A key is never shown back: type it again.</p>` : ''}</div><div><button>Set key</button></div></form></div>`;
    });
  };

  r.get('/', (req, res) => show(req, res));
  const saved = (res: Response, what: keyof typeof SAVED) => res.redirect(303, `${base(res)}?saved=${what}`);
  // a refused form comes back with what was typed and the message at its field (api/web/form-refusal.ts)
  const again = (req: Request, res: Response) => (state: FormState) => show(req, res, undefined, state);

  r.post('/overage', (req, res) => withFormRefusal(req, res, async () => {
    const orgId = res.locals.access!.org.id;
    if (req.body?.enabled !== 'true') {
      await setOverage(orgId, { enabled: false }, write(req, res, 'overage'));
      return saved(res, 'overage-off');
    }
    const monthlyLimit = count(req.body?.monthly_limit, 'The monthly limit', false)!;
    if (req.body?.confirm !== 'yes') {
      // a limit that overage could never apply under is refused before the dialog, with the reason
      await checkOverageTerms(orgId, { overageEnabled: true, monthlyLimit, allowance: (await SearchSetting.findOne({ where: { orgId } }))?.monthlyAllowance ?? null });
      return show(req, res, { monthlyLimit }); // the dialog; nothing changes yet
    }
    await setOverage(orgId, { enabled: true, monthlyLimit }, write(req, res, 'overage'));
    saved(res, 'overage-on');
  }, again(req, res), { form: 'overage', field: 'monthly_limit' }));
  r.post('/limit', (req, res) => withFormRefusal(req, res, async () => {
    await setMonthlyLimit(res.locals.access!.org.id, count(req.body?.monthly_limit, 'The monthly limit', true), write(req, res, 'limit'));
    saved(res, 'limit');
  }, again(req, res), { form: 'limit', field: 'monthly_limit' }));
  r.post('/members/:userId', (req, res) => withFormRefusal(req, res, async () => {
    const cap = count(req.body?.cap, 'A cap', true);
    await setMemberSearch(res.locals.access!.org.id, String(req.params.userId), { cap, enabled: req.body?.enabled === 'true' }, write(req, res, `members/${String(req.params.userId)}`));
    saved(res, 'member');
  }, again(req, res), { form: `member:${String(req.params.userId)}`, field: 'cap' }));
  r.post('/keys', (req, res) => withFormRefusal(req, res, async () => {
    await setOrgSearchKey(res.locals.access!.org.id, String(req.body?.provider ?? ''), String(req.body?.api_key ?? ''), write(req, res, 'keys'));
    saved(res, 'key');
  }, again(req, res), { form: 'keys', field: 'api_key' }));
  r.post('/keys/:provider/remove', async (req, res) => {
    const provider = String(req.params.provider);
    if (!(await removeOrgSearchKey(res.locals.access!.org.id, provider, write(req, res, `keys/${provider}/remove`)))) throw new ApiError(404, 'not_found', `No own key for '${provider.slice(0, 40)}'.`);
    saved(res, 'key-removed');
  });
  return r;
}
