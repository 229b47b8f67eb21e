import type { Router } from 'express';
import { adminRouter } from './admin-router';
import type { RedisClient } from '../../shared/redis/connection';
import { jsonBody } from '../middleware/body';
import { storableBody } from '../middleware/storable-body';
import { errors } from '../../shared/errors/codes';
import { adminAuth } from './auth';
import { auditWrites } from './audit';
import { resourceRouter } from './resources/router';
import { resourceDefs } from './resources/definitions';
import { statsDocs, statsRouter } from './routes/stats';
import { requestLogsDocs, requestLogsRouter } from './routes/request-logs';
import { capabilityPoliciesRouter, capabilityPolicyDocs } from './routes/capability-policies';
import { billingDocs, billingRouter } from './routes/billing';
import { platformAdminDocs, platformAdminRouter } from './routes/platform-admin';
import { searchControlsDocs, searchControlsRouter } from './routes/search';
import { openApiDocument } from './openapi/document';
import { projectDocs, projectsRouter } from './routes/projects';
import { apiKeyDocs, apiKeysRouter } from './routes/api-keys';
import { modelPoolsDocs, modelPoolsRouter } from './routes/model-pools';

/** The management API, mounted at `/admin/v1`: authentication, audit, every family, the OpenAPI document. */
export function managementRouter(deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  const defs = resourceDefs();
  const doc = openApiDocument(defs, [...statsDocs, ...requestLogsDocs, ...capabilityPolicyDocs, ...billingDocs, ...platformAdminDocs, ...searchControlsDocs, ...projectDocs, ...apiKeyDocs, ...modelPoolsDocs]);

  r.get('/openapi.json', (_req, res) => void res.json(doc));
  r.use(adminAuth(deps));
  r.use(auditWrites); // before the body parser, so a malformed write is audited too
  r.use(jsonBody('1mb'), storableBody);
  r.use(platformAdminRouter(deps));
  r.use(statsRouter());
  r.use(requestLogsRouter());
  r.use(capabilityPoliciesRouter(deps));
  r.use(billingRouter());
  r.use(searchControlsRouter(deps)); // before the search-settings resource, whose `/:id` would take `orgs`
  r.use(projectsRouter(deps));
  r.use(apiKeysRouter(deps));
  r.use(modelPoolsRouter(deps));
  for (const def of defs) r.use(resourceRouter(def, deps));
  r.use((req, _res, next) => next(errors.notFound(`No route for ${req.method} /admin/v1${req.path}.`)));
  return r;
}
