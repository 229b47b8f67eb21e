import type { Router } from 'express';
import Joi from 'joi';
import { adminRouter } from '../admin-router';
import type { RedisClient } from '../../../shared/redis/connection';
import { only } from '../../routes/only';
import { requireJson } from '../../middleware/require-json';
import { validate } from '../../validate';
import { ApiError } from '../../../shared/errors/ApiError';
import { ApiKey, Membership, Organization, Project } from '../../../shared/db/models';
import { createApiKey, notAMember, keyListing, listApiKeys, revokeApiKey, rotateApiKey, updateKeyControls } from '../../../shared/tenancy/ops';
import { controlsRow, keyControlsFields, memberLimitsFields, memberLimitsView, type KeyControlsInput, type MemberLimitsInput } from '../../../shared/limits/key-input';
import { budgetStatus } from '../../../shared/limits/limits';
import { removeMember, updateMemberLimits } from '../../../shared/tenancy/members';
import { findRow } from '../resources/define';
import { organizations } from '../resources/definitions/tenancy';
import type { RouteDoc } from '../openapi/route-doc';
import { isUuid } from '../../../shared/uuid';

export const apiKeyBody = Joi.object({
  name: Joi.string().max(200),
  project: Joi.string().max(200).description('Bind the key to a project (id or slug).'),
  user_id: Joi.string().guid().description("The member the key belongs to: their search switch and cap, tool policy and membership apply to it."),
  org_wide: Joi.boolean().valid(true).description('An organization-wide key (no member). Say it explicitly: exactly one of `user_id` and `org_wide` is required.'),
  ...keyControlsFields,
}).xor('user_id', 'org_wide');

export const rotateBody = Joi.object({
  grace_seconds: Joi.number().integer().min(0).max(90 * 86400).default(86400).description('How long the old secret keeps working; default one day.'),
});

/** PATCH: the owner's controls on a key; only the fields given change. */
export const apiKeyControlsBody = Joi.object(keyControlsFields).min(1);

/** PATCH a member: the owner's limits on all the member's keys in the org (the api-keys resource's names, no expiry); only the fields given change. */
export const memberLimitsBody = Joi.object(memberLimitsFields).min(1);

const presentMember = async (redis: RedisClient, m: Membership) => {
  const view = memberLimitsView(m);
  return {
    object: 'membership', org_id: m.orgId, user_id: m.userId, role: m.role, ...view,
    budget: m.budgetMicros === null ? null : await budgetStatus(redis, m.orgId, 'member', m.userId, { micros: m.budgetMicros, period: m.budgetPeriod ?? 'month' }),
  };
};

type Listed = Awaited<ReturnType<typeof listApiKeys>>[number];
const presentKey = async (redis: RedisClient, orgId: string, k: Listed) => ({
  object: 'api_key', id: k.id, org_id: orgId, project_id: k.projectId, user_id: k.userId, owner: k.userId ? 'member' : 'organization',
  name: k.name, prefix: k.prefix, state: k.revokedAt ? 'revoked' : 'active', revoked_at: k.revokedAt, created_at: k.createdAt,
  created_by: k.createdBy, last_used_at: k.lastUsedAt, previous_secret_until: k.previousSecretUntil,
  allowed_models: k.allowed_models, rpm: k.rpm, tpm: k.tpm, budget_usd: k.budget_usd, budget_period: k.budget_period, expires_at: k.expires_at,
  budget: k.budget_usd === null ? null : await budgetStatus(redis, orgId, 'key', k.id, { micros: Math.round(k.budget_usd * 1e6), period: k.budget_period! }),
});

/**
 * An organization's inference keys and members (family `organizations`): the same rules as the
 * dashboard and `gateway key create`: every key names its owner (a member, or the organization when
 * asked for explicitly), and removing a member revokes their keys in the org on every pod.
 */
export function apiKeysRouter(deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  only(r, '/organizations/:id/api-keys', {
    get: async (req, res) => {
      const org = await findRow<Organization>(organizations, String(req.params.id));
      res.json({ object: 'list', data: await Promise.all((await listApiKeys(org.id)).map((k) => presentKey(deps.redis, org.id, k))) });
    },
    post: [
      requireJson,
      async (req, res) => {
        const org = await findRow<Organization>(organizations, String(req.params.id));
        const body = validate<{ name?: string; project?: string; user_id?: string; org_wide?: true } & KeyControlsInput>(apiKeyBody, req.body);
        if (body.user_id && !(await Membership.findOne({ where: { orgId: org.id, userId: body.user_id } }))) {
          throw notAMember(body.user_id);
        }
        let projectId: string | null = null;
        if (body.project) {
          const p = await Project.findOne({ where: { orgId: org.id, archivedAt: null, ...(isUuid(body.project) ? { id: body.project } : { slug: body.project }) } });
          if (!p) throw new ApiError(400, 'invalid_project', `Unknown project '${body.project}' for this organization.`);
          projectId = p.id;
        }
        const k = await createApiKey(deps.redis, { orgId: org.id, projectId, name: body.name, userId: body.user_id ?? null, controls: controlsRow(body) });
        res.locals.auditTarget = k.id;
        const row = (await ApiKey.findByPk(k.id))!;
        res.status(201).json({ ...(await presentKey(deps.redis, org.id, keyListing(row))), key: k.key });
      },
    ],
  });
  only(r, '/organizations/:id/api-keys/:key/revoke', {
    post: async (req, res) => {
      const org = await findRow<Organization>(organizations, String(req.params.id));
      const id = String(req.params.key);
      const k = isUuid(id) ? await ApiKey.findOne({ where: { id, orgId: org.id } }) : null;
      if (!k) throw new ApiError(404, 'not_found', `No API key '${id}' in this organization.`);
      await revokeApiKey(deps.redis, k.id);
      res.locals.auditTarget = k.id;
      await k.reload();
      res.json(await presentKey(deps.redis, org.id, keyListing(k)));
    },
  });
  only(r, '/organizations/:id/api-keys/:key/rotate', {
    post: async (req, res) => {
      const org = await findRow<Organization>(organizations, String(req.params.id));
      const id = String(req.params.key);
      const k = isUuid(id) ? await ApiKey.findOne({ where: { id, orgId: org.id, revokedAt: null } }) : null;
      const missing = () => new ApiError(404, 'not_found', `No active API key '${id}' in this organization.`);
      if (!k) throw missing();
      const body = validate<{ grace_seconds: number }>(rotateBody, req.body ?? {});
      const rotated = await rotateApiKey(deps.redis, k.id, body.grace_seconds);
      if (!rotated) throw missing(); // revoked meanwhile
      res.locals.auditTarget = k.id;
      await k.reload();
      res.json({ ...(await presentKey(deps.redis, org.id, keyListing(k))), key: rotated.key });
    },
  });
  only(r, '/organizations/:id/api-keys/:key', {
    patch: [
      requireJson,
      async (req, res) => {
        const org = await findRow<Organization>(organizations, String(req.params.id));
        const id = String(req.params.key);
        const k = isUuid(id) ? await ApiKey.findOne({ where: { id, orgId: org.id } }) : null;
        if (!k) throw new ApiError(404, 'not_found', `No API key '${id}' in this organization.`);
        const body = validate<KeyControlsInput>(apiKeyControlsBody, req.body);
        await updateKeyControls(deps.redis, k.id, controlsRow(body));
        res.locals.auditTarget = k.id;
        await k.reload();
        res.json(await presentKey(deps.redis, org.id, keyListing(k)));
      },
    ],
  });
  only(r, '/organizations/:id/members/:userId', {
    patch: [
      requireJson,
      async (req, res) => {
        const org = await findRow<Organization>(organizations, String(req.params.id));
        const userId = String(req.params.userId);
        const body = validate<MemberLimitsInput>(memberLimitsBody, req.body);
        const m = await updateMemberLimits(deps.redis, org.id, userId, controlsRow(body));
        if (!m) throw new ApiError(404, 'not_found', `User '${userId}' is not a member of this organization.`);
        res.locals.auditTarget = `${org.id}/${userId}`;
        res.json(await presentMember(deps.redis, m));
      },
    ],
    delete: async (req, res) => {
      const org = await findRow<Organization>(organizations, String(req.params.id));
      const userId = String(req.params.userId);
      const done = isUuid(userId) ? await removeMember(deps.redis, org.id, userId) : { removed: false, revokedKeys: 0 };
      if (!done.removed) throw new ApiError(404, 'not_found', `User '${userId}' is not a member of this organization.`);
      res.locals.auditTarget = `${org.id}/${userId}`;
      res.json({ object: 'membership', org_id: org.id, user_id: userId, deleted: true, revoked_api_keys: done.revokedKeys });
    },
  });
  return r;
}

export const apiKeyDocs: RouteDoc[] = [
  { method: 'get', path: '/organizations/{id}/api-keys', family: 'organizations', summary: "The organization's inference keys (never the secret), each with its owner: `user_id` and `owner` (`member` or `organization`)." },
  { method: 'post', path: '/organizations/{id}/api-keys', family: 'organizations', summary: 'Creates an inference key; the secret is in this answer only. Exactly one of `user_id` (a member\'s key) and `org_wide: true`.', body: apiKeyBody, created: true },
  { method: 'patch', path: '/organizations/{id}/api-keys/{key}', family: 'organizations', summary: "Changes a key's allowed models, rate limits, budget or expiry (only the fields given); every pod applies them from its next request. Answers the key with its budget's spent, reserved and remaining.", body: apiKeyControlsBody },
  { method: 'post', path: '/organizations/{id}/api-keys/{key}/rotate', family: 'organizations', summary: 'Issues a new secret for the key (same id, owner, limits, budget); the new secret is in this answer only. The old secret keeps working for `grace_seconds` (default 86400), shown as `previous_secret_until`.', body: rotateBody },
  { method: 'post', path: '/organizations/{id}/api-keys/{key}/revoke', family: 'organizations', summary: 'Revokes a key of the organization; every pod refuses it from its next request.' },
  { method: 'patch', path: '/organizations/{id}/members/{userId}', family: 'organizations', summary: "Sets the member's limits (`allowed_models`, `rpm`, `tpm`, `budget_usd` per `budget_period`; null clears one; only the fields given change), applied to every key the member owns in the organization on top of the key's own, rates and budget counted over all those keys; every pod applies them from its next request. Answers the membership with its budget's spent, reserved and remaining.", body: memberLimitsBody },
  { method: 'delete', path: '/organizations/{id}/members/{userId}', family: 'organizations', summary: "Removes a member; the member's keys in the organization are revoked on every pod at once." },
];
