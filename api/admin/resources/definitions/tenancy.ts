import Joi from 'joi';
import type { Model } from 'sequelize';
import { Organization, Plan, User } from '../../../../shared/db/models';
import { deleteUser } from '../../../../shared/platform/keys';
import { jsonObject, name, slug, uuid, type ResourceDef } from '../define';
import { actorOf } from '../../actor';
import { purgeOrgImages } from '../../../../shared/images/store';
import { ApiError } from '../../../../shared/errors/ApiError';
import { SLUG_RULE, slugify } from '../../../../shared/tenancy/ops';
import { emailTakenBy } from '../../../../shared/web/sign-in-user';

const laneCounts = () => Joi.object().pattern(/^[a-z0-9]+:[a-z0-9]+$/, Joi.number().integer().min(0).max(100_000));

export const organizations: ResourceDef = {
  path: '/organizations',
  family: 'organizations',
  object: 'organization',
  description: 'Organizations: plan, lane counts (overrides of the plan), entitlements and policies.',
  model: Organization,
  fields: {
    name: { schema: name(), required: true, filter: true },
    slug: {
      schema: slug(),
      filter: true,
      derive: (body) => slugify(String(body.name)),
      description: `URL-safe id, unique. Default when omitted: derived from \`name\` as \`gateway org create\` does (${SLUG_RULE}).`,
    },
    plan_id: { schema: uuid().allow(null), filter: true },
    lane_overrides: { schema: laneCounts(), description: 'Lane counts keyed `<pool>:<lane>`, overriding the plan.' },
    entitlements: { schema: jsonObject(), description: 'Overrides of the plan entitlements, e.g. `{"background": true}`.' },
    policies: { schema: jsonObject(), readOnly: true, description: 'Capability policies; written through /capability-policies.' },
  },
  // Image bytes first: the rows go with the organization by cascade, the stored files would not.
  destroy: async (row) => {
    try {
      await purgeOrgImages(String(row.get('id')));
    } catch {
      throw new ApiError(503, 'storage_unavailable', "Some of the organization's stored images could not be deleted, so the organization was not deleted. Retry.", { retryAfter: 5 });
    }
    await row.destroy();
  },
};

export const plans: ResourceDef = {
  path: '/plans',
  family: 'plans',
  object: 'plan',
  description: 'Plans: default lane counts and entitlements of their organizations.',
  model: Plan,
  fields: {
    name: { schema: slug(), required: true, filter: true },
    lane_limits: { schema: laneCounts(), description: 'Lane counts keyed `<pool>:<lane>`.' },
    entitlements: { schema: jsonObject(), description: 'e.g. `{"background": true, "policies": {"systemone": "included"}}`.' },
  },
};

/**
 * A platform admin is out of reach of the `users` family: changing one (their email is their console
 * sign-in) or deleting one (which demotes them and revokes every key and token they own) is the power
 * the spec keeps from every management key, as it keeps the platform-admin grant. Demote first with a
 * platform admin's token (`PUT /users/:id/platform-admin`), or use the console or the CLI.
 */
function notPlatformAdmin(row: Model): void {
  if (row.get('isPlatformAdmin') === true) {
    throw new ApiError(403, 'platform_admin_protected', 'This user is a platform admin: a management key cannot change or delete them. Demote them first with a platform admin token (PUT /admin/v1/users/{id}/platform-admin), or use the operator console or the CLI.');
  }
}

export const users: ResourceDef = {
  path: '/users',
  family: 'users',
  object: 'user',
  description: 'Users. Deletion is soft and revokes every platform key the user owns. Platform-admin grants and impersonation are not part of this family, nor is changing or deleting a platform admin (403 `platform_admin_protected`: demote them first).',
  model: User,
  scope: { deletedAt: null },
  fields: {
    email: { schema: Joi.string().email({ tlds: false }).max(254), required: true, filter: true },
    name: { schema: Joi.string().max(200).allow(null) },
    is_platform_admin: { schema: Joi.boolean(), readOnly: true, filter: true },
    policies: { schema: jsonObject(), readOnly: true, description: 'Per-user policies; written through /capability-policies/users/{id}.' },
  },
  // emails are looked up case-insensitively: one taken in another letter case is taken
  check: async (values, _req, row) => {
    if (row) notPlatformAdmin(row);
    if (typeof values.email === 'string' && (await emailTakenBy(values.email, row?.get('id') as string | undefined))) {
      throw new ApiError(409, 'already_exists', 'A record with the same email (compared case-insensitively) already exists.', { param: 'email' });
    }
  },
  destroy: async (row, req) => {
    notPlatformAdmin(row);
    await deleteUser(row as User, actorOf(req));
  },
};
