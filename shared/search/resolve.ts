import { Membership, SearchOrgKey, SearchProvider, SearchSetting } from '../db/models';
import { decrypt } from '../crypto';
import type { Directory, OrgContext } from '../tenancy/directory';
import { searchErrors } from './errors';
import type { KeySource } from './types';

/** Free searches per month when neither the org's settings nor its plan say (plan entitlement `web_search_allowance`). */
export const DEFAULT_SEARCH_ALLOWANCE = 100;
/** Searches per org per minute when the plan says nothing (entitlement `web_search_per_minute`); own-key searches count. */
export const DEFAULT_SEARCH_PER_MINUTE = 600;

/**
 * What the gate reads from Postgres is cached per pod for one cache epoch (shared/cache/epoch.ts):
 * the management API's resource writes and every write in ./settings.ts bump it, so a change is seen
 * by the next search on every pod.
 */
interface ProviderRow {
  name: string;
  kind: string;
  baseUrl: string;
  enabled: boolean;
  isDefault: boolean;
  priceMicros: number;
  fetchPriceMicros: number;
  apiKeyEncrypted: string | null;
}

export interface OrgSettings {
  defaultProvider: string | null;
  allowedProviders: string[];
  monthlyAllowance: number | null;
  overageEnabled: boolean;
  overageMonthlyLimit: number | null;
}

function providers(dir: Directory): Promise<ProviderRow[]> {
  return dir.memo('search:providers', async () =>
    (await SearchProvider.findAll({ order: [['name', 'ASC']] })).map((p) => ({
      name: p.name,
      kind: p.kind,
      baseUrl: p.baseUrl,
      enabled: p.enabled,
      isDefault: p.isDefault,
      priceMicros: Number(p.priceMicros),
      fetchPriceMicros: Number(p.fetchPriceMicros),
      apiKeyEncrypted: p.apiKeyEncrypted,
    })),
  );
}

function orgSettings(dir: Directory, orgId: string): Promise<OrgSettings | null> {
  return dir.memo(`search:settings:${orgId}`, async () => {
    const s = await SearchSetting.findOne({ where: { orgId } });
    return s
      ? { defaultProvider: s.defaultProvider, allowedProviders: s.allowedProviders ?? [], monthlyAllowance: s.monthlyAllowance ?? null, overageEnabled: s.overageEnabled, overageMonthlyLimit: s.overageMonthlyLimit ?? null }
      : null;
  });
}

function orgKeys(dir: Directory, orgId: string): Promise<Map<string, string>> {
  return dir.memo(`search:keys:${orgId}`, async () => new Map((await SearchOrgKey.findAll({ where: { orgId } })).map((k) => [k.provider, k.keyEncrypted])));
}

export interface ResolvedProvider {
  /** The provider key (`search_providers.name`). */
  name: string;
  kind: string;
  baseUrl: string;
  priceMicros: number;
  fetchPriceMicros: number;
  keySource: KeySource;
  /** Decrypted; sealed again before it goes on the queue, never logged. */
  apiKey: string;
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.trunc(v) : fallback;
}

/**
 * The spec's provider resolution: an explicit provider must be known and enabled (and allowed for
 * the org), never swapped; else the org's default, failing if it was disabled since; else the platform
 * default (`is_default`, else the first enabled provider by name). Then the key: the org's own key for
 * that provider first, then the platform key, else `provider_unconfigured`.
 */
export async function resolveProvider(dir: Directory, orgId: string, settings: OrgSettings | null, explicit: string | undefined): Promise<ResolvedProvider> {
  const all = await providers(dir);
  const allowed = settings?.allowedProviders ?? [];
  let row: ProviderRow | undefined;
  if (explicit !== undefined) {
    row = all.find((p) => p.name === explicit);
    if (!row || !row.enabled || (allowed.length > 0 && !allowed.includes(row.name))) throw searchErrors.providerNotAllowed(explicit);
  } else if (settings?.defaultProvider) {
    row = all.find((p) => p.name === settings.defaultProvider);
    if (!row || !row.enabled) {
      throw searchErrors.providerUnconfigured(`The organization's default search provider '${settings.defaultProvider}' is not available; choose another default or name a provider.`);
    }
  } else {
    row = all.find((p) => p.enabled && p.isDefault) ?? all.find((p) => p.enabled);
    if (!row) throw searchErrors.providerUnconfigured('No web search provider is enabled on this platform.');
  }
  const own = (await orgKeys(dir, orgId)).get(row.name);
  const sealed = own ?? row.apiKeyEncrypted;
  if (!sealed) throw searchErrors.providerUnconfigured(`No key is configured for the search provider '${row.name}'.`);
  return {
    name: row.name,
    kind: row.kind,
    baseUrl: row.baseUrl,
    priceMicros: row.priceMicros,
    fetchPriceMicros: row.fetchPriceMicros,
    keySource: own ? 'own' : 'platform',
    apiKey: decrypt(sealed),
  };
}

export interface OrgSearchTerms {
  settings: OrgSettings | null;
  allowance: number;
  overageEnabled: boolean;
  monthlyLimit: number | null;
  perMinute: number | null;
}

/** The free allowance a plan's (merged) entitlements give, when the org's settings name none. */
export function planAllowance(entitlements: Record<string, unknown>): number {
  return numberOr(entitlements.web_search_allowance, DEFAULT_SEARCH_ALLOWANCE);
}

/** The org's allowance (settings, else plan, else the default), overage switch, monthly limit and abuse limit. */
export async function orgSearchTerms(dir: Directory, org: OrgContext): Promise<OrgSearchTerms> {
  const settings = await orgSettings(dir, org.id);
  return {
    settings,
    allowance: settings?.monthlyAllowance ?? planAllowance(org.entitlements),
    overageEnabled: settings?.overageEnabled ?? false,
    monthlyLimit: settings?.overageMonthlyLimit ?? null,
    perMinute: numberOr(org.entitlements.web_search_per_minute, DEFAULT_SEARCH_PER_MINUTE),
  };
}

/** The member's search controls; null when the key belongs to no (current) member of the org. */
export function memberTerms(dir: Directory, orgId: string, userId: string | null): Promise<{ userId: string; cap: number | null; enabled: boolean } | null> {
  if (!userId) return Promise.resolve(null);
  return dir.memo(`search:member:${orgId}:${userId}`, async () => {
    const m = await Membership.findOne({ where: { orgId, userId } });
    return m ? { userId, cap: m.searchCap ?? null, enabled: m.searchEnabled !== false } : null;
  });
}
