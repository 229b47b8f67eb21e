import type { Router, Request } from 'express';
import { adminRouter } from '../admin-router';
import Joi from 'joi';
import { Op } from 'sequelize';
import { only } from '../../routes/only';
import { requireJson } from '../../middleware/require-json';
import { validate, validateQuery } from '../../validate';
import { ApiError } from '../../../shared/errors/ApiError';
import { PlatformKey, User } from '../../../shared/db/models';
import { ALL_SCOPES } from '../../../shared/platform/families';
import { createPlatformKey, PlatformError, presentPlatformKey, revokePlatformKey, setPlatformAdmin } from '../../../shared/platform/keys';
import { actorOf } from '../actor';
import { findRow, present } from '../resources/define';
import { users } from '../resources/definitions/tenancy';
import type { RouteDoc } from '../openapi/route-doc';
import { isUuid } from '../../../shared/uuid';
import type { RedisClient } from '../../../shared/redis/connection';
import { startImpersonation } from '../console/impersonate';

export const createKeyBody = Joi.object({
  scopes: Joi.array().items(Joi.string().valid(...ALL_SCOPES)).min(1).unique().required(),
  name: Joi.string().max(200),
  user_id: Joi.string().guid().description('Owner (a platform admin); default: the caller.'),
});
export const platformAdminBody = Joi.object({ is_platform_admin: Joi.boolean().required() });
const keyQuery = Joi.object({ user_id: Joi.string().guid(), state: Joi.string().valid('active', 'revoked') });

async function findKey(id: string): Promise<PlatformKey> {
  const k = isUuid(id) ? await PlatformKey.findByPk(id) : null;
  if (!k) throw new ApiError(404, 'not_found', `No platform key with id '${id}'.`);
  return k;
}

const self = (req: Request) => req.admin!.principal.user.id;

/**
 * The paths only a platform admin's own token reaches (never a management key): platform keys,
 * platform-admin grants and impersonation.
 */
export function platformAdminRouter(deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  only(r, '/platform-keys', {
    get: async (req, res) => {
      const value = validateQuery<{ user_id?: string; state?: string }>(keyQuery, req.query);
      const where: Record<string, unknown> = {};
      if (value.user_id) where.userId = value.user_id;
      if (value.state) where.revokedAt = value.state === 'revoked' ? { [Op.ne]: null } : null; // presentPlatformKey's state
      const rows = await PlatformKey.findAll({ where, order: [['createdAt', 'DESC']] });
      res.json({ object: 'list', data: rows.map(presentPlatformKey) });
    },
    post: [
      requireJson,
      async (req, res) => {
        const body = validate<{ scopes: string[]; name?: string; user_id?: string }>(createKeyBody, req.body);
        try {
          const k = await createPlatformKey({ userId: body.user_id ?? self(req), scopes: body.scopes, name: body.name }, null);
          res.locals.auditTarget = k.id;
          res.status(201).json({ ...presentPlatformKey(k.row), key: k.key });
        } catch (err) {
          if (err instanceof PlatformError) throw new ApiError(400, 'invalid_owner', err.message);
          throw err;
        }
      },
    ],
  });
  only(r, '/platform-keys/:id', {
    get: async (req, res) => void res.json(presentPlatformKey(await findKey(String(req.params.id)))),
    delete: async (req, res) => {
      const k = await findKey(String(req.params.id));
      await revokePlatformKey(k.id, null);
      res.locals.auditTarget = k.id;
      res.json(presentPlatformKey(await k.reload()));
    },
  });
  only(r, '/users/:id/platform-admin', {
    put: [
      requireJson,
      async (req, res) => {
        const { is_platform_admin } = validate<{ is_platform_admin: boolean }>(platformAdminBody, req.body);
        const user = await findRow<User>(users, String(req.params.id));
        const done = await setPlatformAdmin(user, is_platform_admin, actorOf(req));
        res.locals.auditTarget = user.id;
        res.json({ ...present(users, done.user), revoked_platform_keys: done.revokedKeys });
      },
    ],
  });
  only(r, '/users/:id/impersonate', {
    post: async (req, res) => {
      res.locals.auditTarget = String(req.params.id); // an unknown user's attempt is audited too
      const user = await findRow<User>(users, String(req.params.id));
      if (user.deletedAt) throw new ApiError(404, 'not_found', `No user with id '${user.id}'.`);
      res.locals.auditTarget = user.id;
      const started = await startImpersonation(deps.redis, req, user, null, req.admin!.principal.user);
      res.status(201).json({ object: 'impersonation', user_id: user.id, url: started.url, path: started.path, expires_in: 60, session_minutes: started.minutes });
    },
  });
  return r;
}

export const platformAdminDocs: RouteDoc[] = [
  { method: 'get', path: '/platform-keys', family: null, summary: 'Lists platform keys (never their secrets).', query: keyQuery },
  { method: 'post', path: '/platform-keys', family: null, summary: 'Creates a platform key; the raw `key` is in this answer only.', body: createKeyBody, created: true },
  { method: 'get', path: '/platform-keys/{id}', family: null, summary: 'One platform key.' },
  { method: 'delete', path: '/platform-keys/{id}', family: null, summary: 'Revokes a platform key; it fails from its next request on every pod.' },
  { method: 'put', path: '/users/{id}/platform-admin', family: null, summary: 'Grants or revokes platform admin; a demotion revokes every key the user owns.', body: platformAdminBody },
  { method: 'post', path: '/users/{id}/impersonate', family: null, summary: 'Opens the user\'s dashboard in a short-lived, audited, marked session: `url` is a one-use link valid 60 s.', created: true },
];
