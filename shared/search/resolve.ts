import { Membership, SearchOrgKey, SearchProvider, SearchSetting } from '../db/models';
import { decrypt } from '../crypto';
import type { OrgContext } from '../tenancy/directory';
import { searchErrors } from './errors';
import type { KeySource } from './types';

/** Free searches per month when neither the org's settings nor its plan say (plan entitlement `web_search_allowance`). */
export const DEFAULT_SEARCH_ALLOWANCE = 100;
/** Searches per org per minute when the plan says nothing (entitlement `web_search_per_minute`); own-key searches count. */
export const DEFAULT_SEARCH_PER_MINUTE = 600;

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
export async function resolveProvider(orgId: string, settings: SearchSetting | null, explicit: string | undefined): Promise<ResolvedProvider> {
  const allowed = settings?.allowedProviders ?? [];
  let row: SearchProvider | null;
  if (explicit !== undefined) {
    row = await SearchProvider.findOne({ where: { name: explicit } });
    if (!row || !row.enabled || (allowed.length > 0 && !allowed.includes(row.name))) throw searchErrors.providerNotAllowed(explicit);
  } else if (settings?.defaultProvider) {
    row = await SearchProvider.findOne({ where: { name: settings.defaultProvider } });
    if (!row || !row.enabled) {
      throw searchErrors.providerUnconfigured(`The organization's default search provider '${settings.defaultProvider}' is not available; choose another default or name a provider.`);
    }
  } else {
    row =
      (await SearchProvider.findOne({ where: { enabled: true, isDefault: true }, order: [['name', 'ASC']] })) ??
      (await SearchProvider.findOne({ where: { enabled: true }, order: [['name', 'ASC']] }));
    if (!row) throw searchErrors.providerUnconfigured('No web search provider is enabled on this platform.');
  }
  const own = await SearchOrgKey.findOne({ where: { orgId, provider: row.name } });
  let apiKey: string | undefined;
  let keySource: KeySource = 'platform';
  if (own) {
    apiKey = decrypt(own.keyEncrypted);
    keySource = 'own';
  } else if (row.apiKeyEncrypted) {
    apiKey = decrypt(row.apiKeyEncrypted);
  }
  if (!apiKey) throw searchErrors.providerUnconfigured(`No key is configured for the search provider '${row.name}'.`);
  return {
    name: row.name,
    kind: row.kind,
    baseUrl: row.baseUrl,
    priceMicros: Number(row.priceMicros),
    fetchPriceMicros: Number(row.fetchPriceMicros),
    keySource,
    apiKey,
  };
}

export interface OrgSearchTerms {
  settings: SearchSetting | null;
  allowance: number;
  overageEnabled: boolean;
  monthlyLimit: number | null;
  perMinute: number | null;
}

/** The org's allowance (settings, else plan, else the default), overage switch, monthly limit and abuse limit. */
export async function orgSearchTerms(org: OrgContext): Promise<OrgSearchTerms> {
  const settings = await SearchSetting.findOne({ where: { orgId: org.id } });
  const planAllowance = numberOr(org.entitlements.web_search_allowance, DEFAULT_SEARCH_ALLOWANCE);
  return {
    settings,
    allowance: settings?.monthlyAllowance ?? planAllowance,
    overageEnabled: settings?.overageEnabled ?? false,
    monthlyLimit: settings?.overageMonthlyLimit ?? null,
    perMinute: numberOr(org.entitlements.web_search_per_minute, DEFAULT_SEARCH_PER_MINUTE),
  };
}

/** The member's search controls; null when the key belongs to no (current) member of the org. */
export async function memberTerms(orgId: string, userId: string | null): Promise<{ userId: string; cap: number | null; enabled: boolean } | null> {
  if (!userId) return null;
  const m = await Membership.findOne({ where: { orgId, userId } });
  return m ? { userId, cap: m.searchCap ?? null, enabled: m.searchEnabled !== false } : null;
}
