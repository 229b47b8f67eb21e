import Joi from 'joi';
import type { Request } from 'express';
import type { Model } from 'sequelize';
import { SearchOrgKey, SearchProvider, SearchSetting } from '../../../../shared/db/models';
import { encrypt } from '../../../../shared/crypto';
import { checkOverageTerms } from '../../../../shared/search/settings';
import { jsonObject, micros, slug, uuid, type ResourceDef } from '../define';
import { SEARCH_KINDS } from '../../../../shared/search/kinds';
import { mayRedirectSecrets, originOf, refuseSecretRedirect } from '../secret-destination';

export const searchProviders: ResourceDef = {
  path: '/search-providers',
  family: 'search',
  object: 'search_provider',
  description: 'Web search providers (`name` is the provider key callers use). `api_key` is the platform key: write-only (encrypted at rest); `has_api_key` tells whether one is set.',
  model: SearchProvider,
  fields: {
    name: { schema: slug(), required: true, filter: true },
    kind: { schema: Joi.string().valid(...SEARCH_KINDS), required: true, filter: true, description: `The adapter: ${SEARCH_KINDS.map((k) => `\`${k}\``).join(', ')}.` },
    base_url: { schema: Joi.string().uri({ scheme: ['http', 'https'] }).max(500), required: true },
    enabled: { schema: Joi.boolean(), filter: true },
    price_micros: { schema: micros(), bigint: true, description: 'Price of one search in micro-dollars (charged for overage searches).' },
    fetch_price_micros: { schema: micros(), bigint: true, description: 'Price of one page fetch (native web_fetch) in micro-dollars.' },
    is_default: { schema: Joi.boolean(), filter: true, description: 'The platform default provider (used when neither the call nor the org names one).' },
    api_key: { schema: Joi.string().min(1).max(4096).allow(null), writeOnly: true, toRow: (v) => ({ apiKeyEncrypted: v === null ? null : encrypt(String(v)) }) },
    has_api_key: { schema: Joi.boolean(), readOnly: true, fromRow: (r) => r.apiKeyEncrypted !== null },
    config: { schema: jsonObject() },
  },
  check: (values, req, row) => refuseKeyMove(values, req, row),
};

/**
 * A search provider's platform key and the organizations' own keys for it are sent to its `base_url`
 * (../secret-destination.ts); the own keys are stored under the provider's name. With `search:write`
 * alone, a write may not change the origin either goes to: moving a provider that keeps its platform
 * key, or giving the name own keys are stored under to a provider on another origin (a rename, or a
 * create after the old one was renamed or deleted). Replacing or clearing the platform key in the same
 * write is no move of it (the old one goes nowhere new).
 */
async function refuseKeyMove(values: Record<string, unknown>, req: Request, row?: Model): Promise<void> {
  if (mayRedirectSecrets(req)) return;
  const name = String(values.name ?? row?.get('name'));
  const to = originOf(values.baseUrl ?? row?.get('baseUrl'));
  const param = values.baseUrl !== undefined ? 'base_url' : 'name';
  const platformKeyMoves = row !== undefined && row.get('apiKeyEncrypted') !== null && values.apiKeyEncrypted === undefined && to !== originOf(row.get('baseUrl'));
  if (platformKeyMoves) return refuseSecretRedirect(req, "This search provider holds a platform key, which is sent to its base_url: moving it to another host takes the scope platform-credentials:write as well.", param);
  // the own keys stored under this name went to the provider that had it (none: nowhere)
  const holder = row !== undefined && name === row.get('name') ? row : await SearchProvider.findOne({ where: { name } });
  if (to === originOf(holder?.get('baseUrl')) || (await SearchOrgKey.count({ where: { provider: name } })) === 0) return;
  refuseSecretRedirect(req, `Organizations' own keys for '${name}' are sent to the base_url of the search provider of that name: sending them to another host takes the scope platform-credentials:write as well.`, param);
}

export const searchSettings: ResourceDef = {
  path: '/search-settings',
  family: 'search',
  object: 'search_setting',
  description: "An organization's web search settings: default provider, allowance and paid overage.",
  model: SearchSetting,
  fields: {
    org_id: { schema: uuid(), required: true, createOnly: true, filter: true },
    default_provider: { schema: slug().allow(null) },
    allowed_providers: { schema: Joi.array().items(slug()).unique().max(50) },
    monthly_allowance: { schema: Joi.number().integer().min(0).allow(null), description: "Free searches per month; null inherits the plan's `web_search_allowance` (default 100)." },
    overage_enabled: { schema: Joi.boolean(), filter: true, description: 'Paid overage; prefer PUT /search-settings/orgs/{orgId}/overage, which requires a monthly limit.' },
    overage_monthly_limit: { schema: Joi.number().integer().min(0).allow(null), description: 'Monthly limit on all searches (platform and own key); null = none (not while overage is on).' },
  },
  // the same rule as PUT /search-settings/orgs/{orgId}/overage: overage on needs a monthly limit above the allowance
  check: async (values, _req, row) => {
    const current = row as SearchSetting | undefined;
    const pick = <K extends 'overageEnabled' | 'overageMonthlyLimit' | 'monthlyAllowance'>(k: K) => (k in values ? values[k] : current?.[k]) as SearchSetting[K] | undefined;
    await checkOverageTerms(String(values.orgId ?? current?.orgId), { overageEnabled: Boolean(pick('overageEnabled')), monthlyLimit: pick('overageMonthlyLimit') ?? null, allowance: pick('monthlyAllowance') ?? null });
  },
};
