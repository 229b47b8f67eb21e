import { Membership, Organization, Plan, SearchOrgKey, SearchProvider, SearchSetting } from '../db/models';
import { planAllowance } from './resolve';
import { encrypt } from '../crypto';
import { recordAudit, type Actor } from '../audit/audit';
import { isUuid } from '../uuid';
import { ApiError } from '../errors/ApiError';
import { bumpEpoch } from '../cache/epoch';
import type { RedisClient } from '../redis/connection';

/**
 * The writes behind the web search controls (owner-only dashboard page, management API, CLI): every
 * one goes through here and is audited (who, what, target; never a key's value).
 */
export interface SettingsWrite {
  /** The cache epoch is bumped after each write, so every pod's gate sees it on its next search. */
  redis: RedisClient;
  actor: Actor;
  /** How the write came in, for the audit entry (e.g. `PUT /admin/v1/search-settings/{org}/overage`, `cli search-keys set`). */
  via: { method: string; path: string };
  requestId?: string | null;
  /** The caller's own middleware audits the write already (the management API): no second entry. */
  auditedByCaller?: boolean;
}

async function audited<T>(w: SettingsWrite, targetId: string, fields: string[], write: () => Promise<T>): Promise<T> {
  const fn = async () => {
    const out = await write();
    await bumpEpoch(w.redis);
    return out;
  };
  if (w.auditedByCaller) return fn();
  try {
    const out = await fn();
    await recordAudit({ actor: w.actor, method: w.via.method, path: w.via.path, family: 'search', targetId, status: 200, requestId: w.requestId ?? null, fields });
    return out;
  } catch (err) {
    const status = err instanceof ApiError ? err.status : 500;
    await recordAudit({ actor: w.actor, method: w.via.method, path: w.via.path, family: 'search', targetId, status, requestId: w.requestId ?? null, fields });
    throw err;
  }
}

async function requireOrg(orgId: string): Promise<void> {
  if (!(await Organization.findByPk(orgId))) throw new ApiError(404, 'not_found', `No organization with id '${orgId}'.`);
}

async function settingsRow(orgId: string): Promise<SearchSetting> {
  const [row] = await SearchSetting.findOrCreate({ where: { orgId }, defaults: { orgId } });
  return row;
}

/** The org's free allowance as the gate computes it: the settings' own, else the plan's (with the org's overrides), else the default. */
async function allowanceOf(orgId: string, settingsAllowance: number | null): Promise<number> {
  if (settingsAllowance !== null) return settingsAllowance;
  const org = await Organization.findByPk(orgId);
  const plan = org?.planId ? await Plan.findByPk(org.planId) : null;
  return planAllowance({ ...(plan?.entitlements ?? {}), ...(org?.entitlements ?? {}) });
}

/**
 * The rule every writer of search settings applies (these functions, and the generic
 * `/search-settings` CRUD): paid overage on needs a monthly limit, and one above the free allowance.
 * The limit counts every search of the month, so a limit at or below the allowance stops searches
 * before any paid one: overage could never apply, and the owner would believe it does.
 */
export async function checkOverageTerms(orgId: string, terms: { overageEnabled: boolean; monthlyLimit: number | null | undefined; allowance: number | null }): Promise<void> {
  if (!terms.overageEnabled) return;
  if (terms.monthlyLimit === null || terms.monthlyLimit === undefined) {
    throw new ApiError(400, 'invalid_request', 'Paid overage needs a monthly limit (a search count).');
  }
  const allowance = await allowanceOf(orgId, terms.allowance);
  if (terms.monthlyLimit <= allowance) {
    throw new ApiError(400, 'invalid_request', `Paid overage could never apply with a monthly limit of ${terms.monthlyLimit}: the limit counts every search of the month and the first ${allowance} are the free allowance, so searches would stop before any paid one. Set a monthly limit above ${allowance}, or leave overage off.`);
  }
}

/**
 * Paid overage on or off. Turning it on needs a monthly limit above the allowance (kept from before
 * when omitted). Off takes effect at once: past the allowance, platform-key searches fail `quota_exceeded`.
 */
export async function setOverage(orgId: string, input: { enabled: boolean; monthlyLimit?: number | null }, w: SettingsWrite): Promise<SearchSetting> {
  return audited(w, orgId, ['enabled', ...(input.monthlyLimit !== undefined ? ['monthly_limit'] : [])], async () => {
    await requireOrg(orgId);
    const row = await settingsRow(orgId);
    const limit = input.monthlyLimit !== undefined ? input.monthlyLimit : row.overageMonthlyLimit;
    await checkOverageTerms(orgId, { overageEnabled: input.enabled, monthlyLimit: limit, allowance: row.monthlyAllowance ?? null });
    return row.update({ overageEnabled: input.enabled, overageMonthlyLimit: limit ?? null });
  });
}

/** The org's monthly limit on all searches (platform and own key); null removes it (not while overage is on). */
export async function setMonthlyLimit(orgId: string, limit: number | null, w: SettingsWrite): Promise<SearchSetting> {
  return audited(w, orgId, ['monthly_limit'], async () => {
    await requireOrg(orgId);
    const row = await settingsRow(orgId);
    await checkOverageTerms(orgId, { overageEnabled: row.overageEnabled, monthlyLimit: limit, allowance: row.monthlyAllowance ?? null });
    return row.update({ overageMonthlyLimit: limit });
  });
}

/** A member's individual cap (null: inherit the org limit) and on/off switch. */
export async function setMemberSearch(orgId: string, userId: string, input: { cap?: number | null; enabled?: boolean }, w: SettingsWrite): Promise<Membership> {
  const fields = [...(input.cap !== undefined ? ['cap'] : []), ...(input.enabled !== undefined ? ['enabled'] : [])];
  return audited(w, `${orgId}/${userId}`, fields, async () => {
    // a user id that is not a uuid is no member (Postgres would refuse the comparison: a 500)
    const m = isUuid(userId) ? await Membership.findOne({ where: { orgId, userId } }) : null;
    if (!m) throw new ApiError(404, 'not_found', 'No such member in this organization.');
    return m.update({ ...(input.cap !== undefined ? { searchCap: input.cap } : {}), ...(input.enabled !== undefined ? { searchEnabled: input.enabled } : {}) });
  });
}

export interface OrgKeyListing {
  provider: string;
  last4: string;
  created_at: string;
}

/** The org's own provider keys: provider, last four characters and creation time; never the key. */
export async function listOrgSearchKeys(orgId: string): Promise<OrgKeyListing[]> {
  const rows = await SearchOrgKey.findAll({ where: { orgId }, order: [['provider', 'ASC']] });
  return rows.map((r) => ({ provider: r.provider, last4: r.last4, created_at: r.createdAt.toISOString() }));
}

/** Sets (or replaces) the org's own key for a known provider; encrypted at rest. */
export async function setOrgSearchKey(orgId: string, provider: string, apiKey: string, w: SettingsWrite): Promise<OrgKeyListing> {
  return audited(w, `${orgId}/${provider}`, ['api_key'], async () => {
    await requireOrg(orgId);
    const key = apiKey.trim();
    if (key.length < 4 || key.length > 4096 || /\s/.test(key)) throw new ApiError(400, 'invalid_request', 'The key must be 4-4096 characters without spaces.', { param: 'api_key' });
    if (!(await SearchProvider.findOne({ where: { name: provider } }))) throw new ApiError(400, 'provider_not_allowed', `The search provider '${provider}' is unknown.`, { param: 'provider' });
    const values = { keyEncrypted: encrypt(key), last4: key.slice(-4) };
    const existing = await SearchOrgKey.findOne({ where: { orgId, provider } });
    const row = existing ? await existing.update(values) : await SearchOrgKey.create({ orgId, provider, ...values });
    return { provider: row.provider, last4: row.last4, created_at: row.createdAt.toISOString() };
  });
}

/** Removes the org's own key for a provider; false when there was none. */
export async function removeOrgSearchKey(orgId: string, provider: string, w: SettingsWrite): Promise<boolean> {
  return audited(w, `${orgId}/${provider}`, [], async () => (await SearchOrgKey.destroy({ where: { orgId, provider } })) > 0);
}
