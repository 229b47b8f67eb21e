import type { Router, Request } from 'express';
import { adminRouter } from '../admin-router';
import Joi from 'joi';
import type { RedisClient } from '../../../shared/redis/connection';
import { only } from '../../routes/only';
import { validate, validateQuery } from '../../validate';
import { requireJson } from '../../middleware/require-json';
import { ApiError } from '../../../shared/errors/ApiError';
import { Organization, User } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { CAPABILITY_VALUES, capabilityPolicy, type Capability } from '../../../shared/policies/capability';
import { Directory } from '../../../shared/tenancy/directory';
import { FEATURES, isFeature, readSwitches, setSwitch, type Feature } from '../../../shared/switches/switches';
import type { RouteDoc } from '../openapi/route-doc';
import { findRow, listPage, pageKeys } from '../resources/define';
import { organizations, users } from '../resources/definitions/tenancy';

const CAPS = Object.keys(CAPABILITY_VALUES) as Capability[];
const tools = () => Joi.object().pattern(/^[a-z0-9_.-]{1,64}$/, Joi.string().valid('allow', 'deny')).allow(null);

/** `null` clears an org's own value, so the plan's (or the platform default) applies again. */
export const orgPolicyBody = Joi.object({
  ...Object.fromEntries(CAPS.map((c) => [c, Joi.string().valid(...CAPABILITY_VALUES[c]).allow(null)])),
  background: Joi.boolean().allow(null).description('Background-lane entitlement (organizations.entitlements.background).'),
  mcp_tools: tools().description('MCP tool name → allow | deny.'),
}).min(1);
export const userPolicyBody = Joi.object({ mcp_tools: tools().required() });
export const switchBody = Joi.object({ engaged: Joi.boolean().required() });
const listQuery = Joi.object(pageKeys());

/** An org's own policy values and the effective ones the inference side enforces. Call after `directory.sync()`. */
async function presentOrg(directory: Directory, org: Organization) {
  const ctx = (await directory.org(org.id))!;
  const own = org.policies ?? {};
  return {
    object: 'capability_policy',
    org_id: org.id,
    ...Object.fromEntries(CAPS.map((c) => [c, own[c] ?? null])),
    background: org.entitlements?.background ?? null,
    mcp_tools: own.mcp_tools ?? null,
    effective: {
      ...Object.fromEntries(CAPS.map((c) => [c, capabilityPolicy(ctx, c)])),
      background: ctx.entitlements.background === true,
    },
  };
}

function presentUser(u: User) {
  return { object: 'user_capability_policy', user_id: u.id, mcp_tools: (u.policies?.mcp_tools as unknown) ?? null };
}

const findOrg = (id: string) => findRow<Organization>(organizations, id);
const findUser = (id: string) => findRow<User>(users, id);

/** The kill switch named in the path; 404 for a name that is none. */
function featureParam(req: Request): Feature {
  const feature = String(req.params.feature);
  if (!isFeature(feature)) throw new ApiError(404, 'not_found', `No kill switch '${feature}'; one of ${Object.keys(FEATURES).join(', ')}.`);
  return feature;
}

const presentSwitch = (feature: Feature, engaged: boolean) => ({ object: 'kill_switch', feature, code: FEATURES[feature], state: engaged ? 'engaged' : 'released' });

const withoutNulls = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));

/**
 * Capability policies: per-organization values written exactly where `shared/policies/capability.ts`
 * reads them (organizations.policies), MCP tool allow/deny per org and per user, and the operator
 * kill switches. Every write bumps the cache epoch (policies) or broadcasts (switches).
 */
export function capabilityPoliciesRouter(deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  const base = '/capability-policies';
  const directory = new Directory(deps.redis); // the inference side's own cache, so `effective` is what it enforces

  only(r, `${base}/switches`, {
    get: async (_req, res) => {
      const state = await readSwitches(deps.redis);
      res.json({ object: 'list', data: (Object.keys(FEATURES) as Feature[]).map((feature) => presentSwitch(feature, state[feature])) });
    },
  });
  only(r, `${base}/switches/:feature`, {
    get: async (req, res) => {
      const feature = featureParam(req);
      const state = await readSwitches(deps.redis);
      res.json(presentSwitch(feature, state[feature]));
    },
    put: [
      requireJson,
      async (req, res) => {
        const feature = featureParam(req);
        const { engaged } = validate<{ engaged: boolean }>(switchBody, req.body);
        await setSwitch(deps.redis, feature, engaged);
        res.locals.auditTarget = feature;
        res.json(presentSwitch(feature, engaged));
      },
    ],
  });

  only(r, `${base}/users/:id`, {
    get: async (req, res) => void res.json(presentUser(await findUser(String(req.params.id)))),
    patch: [
      requireJson,
      async (req: Request, res) => {
        const u = await findUser(String(req.params.id));
        const { mcp_tools } = validate<{ mcp_tools: Record<string, string> | null }>(userPolicyBody, req.body);
        await u.update({ policies: withoutNulls({ ...(u.policies ?? {}), mcp_tools }) });
        await bumpEpoch(deps.redis);
        res.locals.auditTarget = u.id;
        res.json(presentUser(u));
      },
    ],
  });

  only(r, base, {
    get: async (req, res) => {
      const value = validateQuery<{ limit: number; offset: number }>(listQuery, req.query);
      const { rows, count } = await Organization.findAndCountAll({ limit: value.limit, offset: value.offset, order: [['createdAt', 'DESC'], ['id', 'ASC']] });
      await directory.sync();
      const data = await Promise.all(rows.map((o) => presentOrg(directory, o)));
      res.json(listPage(data, count, value.limit, value.offset));
    },
  });
  only(r, `${base}/:id`, {
    get: async (req, res) => {
      const org = await findOrg(String(req.params.id));
      await directory.sync();
      res.json(await presentOrg(directory, org));
    },
    patch: [
      requireJson,
      async (req, res) => {
        const org = await findOrg(String(req.params.id));
        const body = validate<Record<string, unknown>>(orgPolicyBody, req.body);
        const { background, ...policies } = body;
        const update: Partial<Organization> = { policies: withoutNulls({ ...(org.policies ?? {}), ...policies }) };
        if (background !== undefined) update.entitlements = withoutNulls({ ...(org.entitlements ?? {}), background });
        await org.update(update);
        await bumpEpoch(deps.redis);
        res.locals.auditTarget = org.id;
        await directory.sync();
        res.json(await presentOrg(directory, org));
      },
    ],
  });
  return r;
}

export const capabilityPolicyDocs: RouteDoc[] = [
  { method: 'get', path: '/capability-policies', family: 'capability-policies', summary: "Every organization's capability policies (own and effective).", query: listQuery },
  { method: 'get', path: '/capability-policies/{id}', family: 'capability-policies', summary: "One organization's capability policies." },
  { method: 'patch', path: '/capability-policies/{id}', family: 'capability-policies', summary: "Sets an organization's policies; null clears a value.", body: orgPolicyBody },
  { method: 'get', path: '/capability-policies/users/{id}', family: 'capability-policies', summary: "A user's MCP tool policy." },
  { method: 'patch', path: '/capability-policies/users/{id}', family: 'capability-policies', summary: "Sets a user's MCP tool policy (wins over the org's).", body: userPolicyBody },
  { method: 'get', path: '/capability-policies/switches', family: 'capability-policies', summary: 'Operator kill switches and their states.' },
  { method: 'get', path: '/capability-policies/switches/{feature}', family: 'capability-policies', summary: 'One kill switch.' },
  { method: 'put', path: '/capability-policies/switches/{feature}', family: 'capability-policies', summary: 'Engages or releases a kill switch; every pod follows within a second.', body: switchBody },
];
