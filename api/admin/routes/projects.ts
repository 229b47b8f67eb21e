import type { Router } from 'express';
import { adminRouter } from '../admin-router';
import Joi from 'joi';
import type { RedisClient } from '../../../shared/redis/connection';
import { only } from '../../routes/only';
import { requireJson } from '../../middleware/require-json';
import { validate } from '../../validate';
import { ApiError } from '../../../shared/errors/ApiError';
import { Organization, Project } from '../../../shared/db/models';
import { createProject, projectExists, slugify } from '../../../shared/tenancy/ops';
import { archiveProject, setProjectBudget } from '../../../shared/tenancy/projects';
import { findRow } from '../resources/define';
import { organizations } from '../resources/definitions/tenancy';
import type { RouteDoc } from '../openapi/route-doc';
import { keyControlsFields, type KeyControlsInput } from '../../../shared/limits/key-input';
import { budgetStatus } from '../../../shared/limits/limits';
import { isUuid } from '../../../shared/uuid';

export const projectBody = Joi.object({
  name: Joi.string().min(1).max(200).required(),
  slug: Joi.string().pattern(/^[a-z0-9][a-z0-9-]{0,59}$/).description('Default: from the name.'),
});

/** PATCH: the project's spending limit, shared by all its keys (docs/keys.md); null removes it. */
export const projectBudgetBody = Joi.object({ budget_usd: keyControlsFields.budget_usd.required(), budget_period: keyControlsFields.budget_period });

const presentProject = async (redis: RedisClient, p: Project) => ({
  object: 'project', id: p.id, org_id: p.orgId, name: p.name, slug: p.slug,
  state: p.archivedAt ? 'archived' : 'active', archived_at: p.archivedAt, created_at: p.createdAt,
  budget: p.budgetMicros === null ? null : await budgetStatus(redis, p.orgId, 'project', p.id, { micros: p.budgetMicros, period: p.budgetPeriod ?? 'month' }),
});

/** An organization's projects (family `organizations`): list, create, archive (the same code as the dashboard and `gateway project`). */
export function projectsRouter(deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  only(r, '/organizations/:id/projects', {
    get: async (req, res) => {
      const org = await findRow<Organization>(organizations, String(req.params.id));
      const rows = await Project.findAll({ where: { orgId: org.id }, order: [['createdAt', 'ASC']] });
      res.json({ object: 'list', data: await Promise.all(rows.map((p) => presentProject(deps.redis, p))) });
    },
    post: [
      requireJson,
      async (req, res) => {
        const org = await findRow<Organization>(organizations, String(req.params.id));
        const body = validate<{ name: string; slug?: string }>(projectBody, req.body);
        const slug = body.slug ?? slugify(body.name);
        if (await Project.findOne({ where: { orgId: org.id, slug } })) throw projectExists(slug);
        const p = await createProject(deps.redis, org.id, body.name, slug);
        res.locals.auditTarget = p.id;
        res.status(201).json(await presentProject(deps.redis, p));
      },
    ],
  });
  only(r, '/organizations/:id/projects/:project/archive', {
    post: async (req, res) => {
      const org = await findRow<Organization>(organizations, String(req.params.id));
      const p = await archiveProject(deps.redis, org.id, String(req.params.project));
      if (!p) throw new ApiError(404, 'not_found', `No active project '${String(req.params.project)}' in this organization.`);
      res.locals.auditTarget = p.id;
      res.json(await presentProject(deps.redis, p));
    },
  });
  only(r, '/organizations/:id/projects/:project', {
    patch: [
      requireJson,
      async (req, res) => {
        const org = await findRow<Organization>(organizations, String(req.params.id));
        const id = String(req.params.project);
        const p = await Project.findOne({ where: { orgId: org.id, ...(isUuid(id) ? { id } : { slug: id }) } });
        if (!p) throw new ApiError(404, 'not_found', `No project '${id}' in this organization.`);
        await setProjectBudget(deps.redis, p, validate<KeyControlsInput>(projectBudgetBody, req.body));
        res.locals.auditTarget = p.id;
        res.json(await presentProject(deps.redis, p));
      },
    ],
  });
  return r;
}

export const projectDocs: RouteDoc[] = [
  { method: 'get', path: '/organizations/{id}/projects', family: 'organizations', summary: "The organization's projects, archived ones included (`state`)." },
  { method: 'post', path: '/organizations/{id}/projects', family: 'organizations', summary: 'Creates a project; its id or slug is then usable as SERVICE-PROJECT-ID and in `/a/{key}/p/{project}`.', body: projectBody, created: true },
  { method: 'patch', path: '/organizations/{id}/projects/{project}', family: 'organizations', summary: "Sets the project's spending limit (`budget_usd`, null for none, per `budget_period`), shared by every key used with the project; answers `budget` with spent, reserved and remaining.", body: projectBudgetBody },
  { method: 'post', path: '/organizations/{id}/projects/{project}/archive', family: 'organizations', summary: 'Archives a project (id or slug): listed still, refused as SERVICE-PROJECT-ID (400 invalid_project) from the next request.' },
];
