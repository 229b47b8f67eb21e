import type { Router, Request } from 'express';
import { adminRouter } from '../admin-router';
import Joi from 'joi';
import { only } from '../../routes/only';
import { validate, validateQuery } from '../../validate';
import { requireJson } from '../../middleware/require-json';
import { ApiError } from '../../../shared/errors/ApiError';
import { Organization } from '../../../shared/db/models';
import { actorOf } from '../actor';
import type { RouteDoc } from '../openapi/route-doc';
import { isUuid } from '../../../shared/uuid';
import { listOrgSearchKeys, removeOrgSearchKey, setMemberSearch, setOrgSearchKey, setOverage, type SettingsWrite } from '../../../shared/search/settings';
import { orgSearchTerms } from '../../../shared/search/resolve';
import { searchBillingLine, periodUsage } from '../../../shared/search/billing';
import { periodOf } from '../../../shared/search/period';
import { Directory } from '../../../shared/tenancy/directory';
import type { RedisClient } from '../../../shared/redis/connection';

const count = () => Joi.number().integer().min(0).max(1_000_000_000);
export const overageBody = Joi.object({
  enabled: Joi.boolean().required(),
  monthly_limit: count().allow(null).description('Searches per month, all searches (platform and own key). Needed to enable overage.'),
});
export const memberBody = Joi.object({
  cap: count().allow(null).description('Searches per month for this member; null inherits the org limit.'),
  enabled: Joi.boolean().description('Off: the member\'s searches answer quota_exceeded.'),
}).min(1);
export const orgKeyBody = Joi.object({ api_key: Joi.string().min(4).max(4096).required().description('Write-only; encrypted at rest, never returned.') });
const billingQuery = Joi.object({ org_id: Joi.string().guid().required(), period: Joi.string().pattern(/^\d{4}-(0[1-9]|1[0-2])$/) });

function write(req: Request, redis: RedisClient): SettingsWrite {
  return { redis, actor: actorOf(req)!, via: { method: req.method, path: req.originalUrl.split('?')[0] }, requestId: req.id, auditedByCaller: true };
}

async function orgParam(req: Request): Promise<string> {
  const id = String(req.params.orgId);
  if (!isUuid(id) || !(await Organization.findByPk(id))) throw new ApiError(404, 'not_found', `No organization with id '${id}'.`);
  return id;
}

/**
 * The web search controls of an organization (the owner dashboard page's writes, for operators):
 * paid overage and the monthly limit, member caps and switches, the org's own provider keys, and the
 * period's usage. Every write goes through shared/search/settings.ts; the family's middleware audits it.
 */
export function searchControlsRouter(deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  const base = '/search-settings/orgs/:orgId';
  const directory = new Directory(deps.redis);

  only(r, base, {
    get: async (req, res) => {
      const orgId = await orgParam(req);
      await directory.sync();
      const terms = await orgSearchTerms(directory, (await directory.org(orgId))!);
      const period = periodOf();
      res.json({
        object: 'search_controls',
        org_id: orgId,
        default_provider: terms.settings?.defaultProvider ?? null,
        monthly_allowance: terms.allowance,
        overage_enabled: terms.overageEnabled,
        monthly_limit: terms.monthlyLimit,
        per_minute_limit: terms.perMinute,
        period,
        usage: await periodUsage(orgId, period),
        own_keys: await listOrgSearchKeys(orgId),
      });
    },
  });
  only(r, `${base}/overage`, {
    put: [
      requireJson,
      async (req, res) => {
        const b = validate<{ enabled: boolean; monthly_limit?: number | null }>(overageBody, req.body);
        const row = await setOverage(await orgParam(req), { enabled: b.enabled, monthlyLimit: b.monthly_limit }, write(req, deps.redis));
        res.json({ object: 'search_overage', org_id: row.orgId, enabled: row.overageEnabled, monthly_limit: row.overageMonthlyLimit });
      },
    ],
  });
  only(r, `${base}/members/:userId`, {
    put: [
      requireJson,
      async (req, res) => {
        const b = validate<{ cap?: number | null; enabled?: boolean }>(memberBody, req.body);
        const orgId = await orgParam(req);
        const m = await setMemberSearch(orgId, String(req.params.userId), b, write(req, deps.redis));
        res.json({ object: 'search_member', org_id: orgId, user_id: m.userId, cap: m.searchCap ?? null, enabled: m.searchEnabled });
      },
    ],
  });
  only(r, `${base}/keys`, {
    get: async (req, res) => {
      res.json({ object: 'list', data: await listOrgSearchKeys(await orgParam(req)) });
    },
  });
  only(r, `${base}/keys/:provider`, {
    put: [
      requireJson,
      async (req, res) => {
        const b = validate<{ api_key: string }>(orgKeyBody, req.body);
        res.json({ object: 'search_org_key', ...(await setOrgSearchKey(await orgParam(req), String(req.params.provider), b.api_key, write(req, deps.redis))) });
      },
    ],
    delete: async (req, res) => {
      const provider = String(req.params.provider);
      if (!(await removeOrgSearchKey(await orgParam(req), provider, write(req, deps.redis)))) throw new ApiError(404, 'not_found', `No own key for '${provider.slice(0, 40)}'.`);
      res.json({ object: 'search_org_key', provider, deleted: true });
    },
  });
  only(r, '/billing/search-overage', {
    get: async (req, res) => {
      const q = validateQuery<{ org_id: string; period?: string }>(billingQuery, req.query);
      res.json(await searchBillingLine(q.org_id, q.period ?? periodOf()));
    },
  });
  return r;
}

export const searchControlsDocs: RouteDoc[] = [
  { method: 'get', path: '/search-settings/orgs/{orgId}', family: 'search', summary: "An organization's effective web search controls and this period's usage." },
  { method: 'put', path: '/search-settings/orgs/{orgId}/overage', family: 'search', summary: 'Turns paid overage on (with a monthly limit) or off; off takes effect at once.', body: overageBody },
  { method: 'put', path: '/search-settings/orgs/{orgId}/members/{userId}', family: 'search', summary: "A member's monthly search cap (null inherits) and on/off switch.", body: memberBody },
  { method: 'get', path: '/search-settings/orgs/{orgId}/keys', family: 'search', summary: "The organization's own provider keys (provider, last four characters, created at)." },
  { method: 'put', path: '/search-settings/orgs/{orgId}/keys/{provider}', family: 'search', summary: "Sets the organization's own key for a provider (encrypted at rest, never returned).", body: orgKeyBody },
  { method: 'delete', path: '/search-settings/orgs/{orgId}/keys/{provider}', family: 'search', summary: "Removes the organization's own key for a provider." },
  { method: 'get', path: '/billing/search-overage', family: 'billing', summary: "An organization's web search billing line for a period (overage charged next cycle).", query: billingQuery },
];
