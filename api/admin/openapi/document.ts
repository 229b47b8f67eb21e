import type Joi from 'joi';
import { joiToJson, type JsonSchema } from './joi-to-json';
import { ALL_OPS, schemasOf, warnsOnWrite, type ResourceDef } from '../resources/define';
import type { RouteDoc } from './route-doc';

const errorRef = { $ref: '#/components/responses/Error' };
const ok = (schema: JsonSchema = { type: 'object' }) => ({ description: 'OK', content: { 'application/json': { schema } } });

function queryParams(schema?: Joi.ObjectSchema) {
  if (!schema) return [];
  const s = joiToJson(schema);
  return Object.entries<JsonSchema>(s.properties ?? {}).map(([name, p]) => ({ name, in: 'query', required: false, schema: p }));
}

function pathParams(path: string) {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
}

/** A write's `warnings` (define.ts Warning): what a write that was taken did not do as asked. */
const WARNINGS: JsonSchema = {
  type: 'array',
  description: "Present when the write was taken but something in it was not done as asked (e.g. `base_model_unresolved`: AWS did not tell a Bedrock application inference profile's model, on a pool's write or on a write of its provider's region, base_url or credential).",
  items: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' }, param: { type: 'string', description: 'The body field it is about; on a provider\'s or a credential\'s write, the deployment it is about (`pools["<model>"].deployments[i].base_model`).' } }, required: ['code', 'message'] },
};

/** `schema` (an object's) with the write's `warnings` beside its fields. */
const withWarnings = (schema: JsonSchema): JsonSchema => ({ ...schema, properties: { ...(schema.properties ?? {}), warnings: WARNINGS } });

function operation(family: string | null, summary: string, opts: { body?: Joi.Schema; query?: Joi.ObjectSchema; path: string; created?: boolean; response?: JsonSchema }) {
  return {
    summary,
    tags: [family ?? 'platform-admin'],
    security: [{ [family ? 'managementKey' : 'adminToken']: [] }],
    'x-scope': family,
    parameters: [...pathParams(opts.path), ...queryParams(opts.query)],
    ...(opts.body ? { requestBody: { required: true, content: { 'application/json': { schema: joiToJson(opts.body) } } } } : {}),
    responses: { [opts.created ? '201' : '200']: ok(opts.response), '400': errorRef, '401': errorRef, '403': errorRef, '404': errorRef },
  };
}

/** Item schema of a resource: its readable fields, from the same Joi schemas. */
function itemSchema(def: ResourceDef): JsonSchema {
  const properties: Record<string, JsonSchema> = { id: { type: 'string', format: 'uuid' }, object: { const: def.object } };
  for (const [k, f] of Object.entries(def.fields)) {
    if (f.writeOnly) continue;
    // a writers-only field is null to read-only keys
    properties[k] = f.writersOnly ? { anyOf: [joiToJson(f.schema), { type: 'null' }], description: f.description } : joiToJson(f.schema);
  }
  properties.created_at = { type: 'string', format: 'date-time' };
  return { type: 'object', properties };
}

/** The OpenAPI 3.1 description of the management API, built from the schemas that validate requests. */
export function openApiDocument(defs: ResourceDef[], routes: RouteDoc[]): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (path: string, method: string, op: unknown) => ((paths[`/admin/v1${path}`] ??= {})[method] = op);
  for (const def of defs) {
    const ops = def.ops ?? ALL_OPS;
    const s = schemasOf(def);
    const item = itemSchema(def);
    // a resource with its own check or afterWrite may answer a write with warnings; with afterDelete, its delete too
    const written = warnsOnWrite(def) ? withWarnings(item) : item;
    const idPath = `${def.path}/{id}`;
    if (ops.includes('list')) add(def.path, 'get', operation(def.family, `List ${def.object}s. ${def.description}`, { path: def.path, query: s.query, response: { type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: item }, total: { type: 'integer' }, has_more: { type: 'boolean' } } } }));
    if (ops.includes('create')) add(def.path, 'post', operation(def.family, `Create a ${def.object}.`, { path: def.path, body: s.create, created: true, response: written }));
    if (ops.includes('get')) add(idPath, 'get', operation(def.family, `Get a ${def.object}.`, { path: idPath, response: item }));
    if (ops.includes('update')) add(idPath, 'patch', operation(def.family, `Update a ${def.object}.`, { path: idPath, body: s.update, response: written }));
    if (ops.includes('delete')) add(idPath, 'delete', operation(def.family, `Delete a ${def.object}.`, { path: idPath, ...(def.afterDelete ? { response: withWarnings({ type: 'object' }) } : {}) }));
  }
  for (const r of routes) add(r.path, r.method, operation(r.family, r.summary, { path: r.path, body: r.body, query: r.query, created: r.created === true, ...(r.warns ? { response: withWarnings({ type: 'object' }) } : {}) }));
  return {
    openapi: '3.1.0',
    info: { title: 'Inference gateway management API', version: '1' },
    paths,
    components: {
      securitySchemes: {
        managementKey: { type: 'http', scheme: 'bearer', description: 'svc_platform_… with <family>:read|write scopes' },
        adminToken: { type: 'http', scheme: 'bearer', description: "svc_admin_…: a platform admin's own token" },
      },
      responses: {
        Error: {
          description: 'Error envelope',
          content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' }, param: { type: 'string', description: 'The request field at fault (a body field path, or a query parameter), when there is one.' } }, required: ['code', 'message'] } } } } },
        },
      },
    },
  };
}
