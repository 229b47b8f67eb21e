import Joi from 'joi';
import type { ModelStatic, Model, WhereOptions } from 'sequelize';
import type { Request } from 'express';
import type { Family } from '../../../shared/platform/families';
import { ApiError } from '../../../shared/errors/ApiError';
import { isUuid } from '../../../shared/uuid';

export type Op = 'list' | 'get' | 'create' | 'update' | 'delete';

/** One API field of a resource (snake_case on the wire) and how it maps to the model. */
export interface FieldSpec {
  /** The value's schema; presence is added by the factory (required on create when `required`). */
  schema: Joi.Schema;
  /** Model attribute; default: the camelCase of the field name. */
  attr?: string;
  required?: boolean;
  /** Settable on create only. */
  createOnly?: boolean;
  /** Output only (computed or server-managed). */
  readOnly?: boolean;
  /** Input only: never returned (secrets). */
  writeOnly?: boolean;
  /**
   * A secret that acts (an invitation's `code` redeems it): returned only to keys holding the family's
   * write scope (every write answer, the create's included, takes it), `null` to a read-only key, and a
   * filter on it takes the write scope too (it would be a way to test guesses).
   */
  writersOnly?: boolean;
  /** `?<field>=` filter on the list. */
  filter?: boolean;
  /** Custom mapping of an input value to model attributes (e.g. encrypt a secret). */
  toRow?: (value: unknown) => Record<string, unknown>;
  /** Custom output (e.g. a hint instead of a secret); default: the attribute, BIGINT as number. */
  fromRow?: (row: Record<string, unknown>) => unknown;
  /** On create, the value when the body omits the field, computed from the body (e.g. a slug from the name). */
  derive?: (body: Record<string, unknown>) => unknown;
  /** BIGINT column: returned as a JSON number. */
  bigint?: boolean;
  description?: string;
}

/** A management resource, as data: the generic router and the OpenAPI document are built from it. */
export interface ResourceDef {
  /** Path under /admin/v1, e.g. `/organizations` or `/stripe/customers`. */
  path: string;
  family: Family;
  /** The `object` value of each item, e.g. `organization`. */
  object: string;
  description: string;
  model: ModelStatic<Model>;
  fields: Record<string, FieldSpec>;
  ops?: Op[];
  /** Every query and lookup is limited to rows matching this (e.g. users not deleted). */
  scope?: WhereOptions;
  /** Replaces the row's destroy (soft deletion, cascades). */
  destroy?: (row: Model, req: Request) => Promise<void>;
  /**
   * Extra check of a create or update body against the database; throw an ApiError to refuse. What it
   * returns are warnings about a write it takes all the same (the answer's `warnings`).
   */
  check?: (values: Record<string, unknown>, req: Request, row?: Model) => Promise<void | Warning[]>;
  /**
   * After a create or an update is saved, before the cache epoch moves: more work the write calls for
   * (e.g. a Bedrock provider's profiles asked about again with its new region). `before`: the row's
   * values before an update (undefined on a create). What it returns are warnings for the answer, as check's.
   */
  afterWrite?: (row: Model, before?: Record<string, unknown>) => Promise<void | Warning[]>;
  /** As afterWrite, after a delete (the row as it was); its warnings go in the delete's answer. */
  afterDelete?: (row: Model) => Promise<void | Warning[]>;
  /** After a create: extra fields of the answer (e.g. what became of an invitation's email). */
  afterCreate?: (row: Model) => Promise<Record<string, unknown>>;
  /** Bump the cache epoch after a write (default true): inference pods see the change on their next request. */
  bumpsEpoch?: boolean;
}

/** Something a write did not do as asked, though it was taken (e.g. a deployment's `base_model` AWS did not tell). */
export interface Warning {
  code: string;
  message: string;
  /** The body field it is about, as an error's `param`. */
  param?: string;
}

/** The answer's `warnings`, when there are any (those of each step of the write, in order). */
export const warned = (...steps: (void | Warning[])[]): { warnings?: Warning[] } => {
  const warnings = steps.flatMap((w) => w ?? []);
  return warnings.length ? { warnings } : {};
};

/** Whether a resource's creates and updates may answer with `warnings` (it has a check or an afterWrite). */
export const warnsOnWrite = (def: ResourceDef): boolean => Boolean(def.check || def.afterWrite);

export const ALL_OPS: Op[] = ['list', 'get', 'create', 'update', 'delete'];

export const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
export const attrOf = (name: string, f: FieldSpec) => f.attr ?? camel(name);

export const uuid = () => Joi.string().guid({ version: ['uuidv4', 'uuidv1', 'uuidv5'] });
export const name = () => Joi.string().min(1).max(200);
export const slug = () => Joi.string().pattern(/^[a-z0-9][a-z0-9_-]{0,62}$/);
export const micros = () => Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER);
export const jsonObject = () => Joi.object().unknown(true);

/** `?limit=&offset=` of every paginated list. */
export const pageKeys = () => ({
  limit: Joi.number().integer().min(1).max(200).default(20),
  offset: Joi.number().integer().min(0).default(0),
});

/** The answer of a paginated list. */
export function listPage(data: unknown[], total: number, limit: number, offset: number) {
  return { object: 'list', data, total, limit, offset, has_more: offset + data.length < total };
}

/** Schemas of a resource's create and update bodies, and of its list query. */
export function schemasOf(def: ResourceDef): { create: Joi.ObjectSchema; update: Joi.ObjectSchema; query: Joi.ObjectSchema } {
  const create: Record<string, Joi.Schema> = {};
  const update: Record<string, Joi.Schema> = {};
  const query: Record<string, Joi.Schema> = pageKeys();
  for (const [key, f] of Object.entries(def.fields)) {
    const s = f.description ? f.schema.description(f.description) : f.schema;
    if (!f.readOnly) {
      create[key] = f.required ? s.required() : s;
      if (!f.createOnly) update[key] = s;
    }
    if (f.filter) query[key] = f.schema;
  }
  return {
    create: Joi.object(create),
    update: Joi.object(update).min(1),
    query: Joi.object(query),
  };
}

/**
 * The wire form of a row: id, object, every readable field, timestamps. `writer`: the caller holds the
 * family's write scope (default: a write's answer); else `writersOnly` fields are null.
 */
export function present(def: ResourceDef, row: Model, writer = true): Record<string, unknown> {
  const r = row.get({ plain: true }) as Record<string, unknown>;
  const out: Record<string, unknown> = { id: r.id, object: def.object };
  for (const [key, f] of Object.entries(def.fields)) {
    if (f.writeOnly) continue;
    if (f.writersOnly && !writer) {
      out[key] = null;
      continue;
    }
    const v = f.fromRow ? f.fromRow(r) : r[attrOf(key, f)];
    out[key] = f.bigint && v !== null && v !== undefined ? Number(v) : v;
  }
  out.created_at = r.createdAt;
  if ('updatedAt' in r) out.updated_at = r.updatedAt;
  return out;
}

/** The row of this id within the resource's scope; a 404 naming the resource otherwise (a non-UUID id included). */
export async function findRow<M extends Model = Model>(def: ResourceDef, id: string): Promise<M> {
  const row = isUuid(id) ? await def.model.findOne({ where: { ...(def.scope ?? {}), id } as never }) : null;
  if (!row) throw new ApiError(404, 'not_found', `No ${def.object.replace(/_/g, ' ')} with id '${id}'.`);
  return row as M;
}

/** The body with every omitted derivable field filled in (create only). */
export function withDerived(def: ResourceDef, body: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  for (const [key, f] of Object.entries(def.fields)) if (f.derive && out[key] === undefined) out[key] = f.derive(out);
  return out;
}

/** Maps a validated body to model attributes. */
export function toAttributes(def: ResourceDef, body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const f = def.fields[key];
    if (!f) continue;
    Object.assign(out, f.toRow ? f.toRow(value) : { [attrOf(key, f)]: value });
  }
  return out;
}
