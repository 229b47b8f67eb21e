import type { Router, Response } from 'express';
import { adminRouter } from '../admin-router';
import type { RedisClient } from '../../../shared/redis/connection';
import type { Model } from 'sequelize';
import { only } from '../../routes/only';
import { validate, validateQuery } from '../../validate';
import { requireJson } from '../../middleware/require-json';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { ALL_OPS, findRow, listPage, present, schemasOf, toAttributes, warned, withDerived, type ResourceDef } from './define';
import { fromDbError } from './db-errors';
import { holds, requireScope } from '../extra-scope';

/**
 * The generic management resource: list (paginated, filterable), get, create, update (PATCH) and
 * delete over one Sequelize model, all driven by its ResourceDef.
 */
export function resourceRouter(def: ResourceDef, deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  const ops = def.ops ?? ALL_OPS;
  const schemas = schemasOf(def);
  async function written(res: Response, status: number, row: Model | null, body: unknown): Promise<void> {
    if (def.bumpsEpoch !== false) await bumpEpoch(deps.redis);
    if (row) res.locals.auditTarget = (row.get('id') as string) ?? null;
    res.status(status).json(body);
  }
  /**
   * The step after a saved write (afterWrite, afterDelete): if it fails, the write stands all the same,
   * so the cache epoch still moves before the error is answered.
   */
  const afterSaved = async <T>(step: (() => Promise<T>) | undefined): Promise<T | undefined> => {
    try {
      return await step?.();
    } catch (err) {
      if (def.bumpsEpoch !== false) await bumpEpoch(deps.redis).catch(() => undefined);
      throw err;
    }
  };
  const guard = async <T>(op: 'write' | 'delete', fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw fromDbError(err, op);
    }
  };

  const collection: Parameters<typeof only>[2] = {};
  if (ops.includes('list')) {
    collection.get = async (req, res) => {
      // unknown parameters refused
      const { limit, offset, ...filters } = validateQuery<{ limit: number; offset: number } & Record<string, unknown>>(schemas.query, req.query);
      const writer = holds(req, def.family, 'write');
      for (const key of Object.keys(filters)) {
        if (def.fields[key]?.writersOnly) requireScope(req, def.family, 'write', `Filtering by ${key} takes the scope ${def.family}:write: a read-only key never sees it.`, key);
      }
      const where = { ...(def.scope ?? {}), ...toAttributes(def, filters) };
      const { rows, count } = await def.model.findAndCountAll({ where: where as never, limit, offset, order: [['createdAt', 'DESC'], ['id', 'ASC']] });
      res.json(listPage(rows.map((row) => present(def, row, writer)), count, limit, offset));
    };
  }
  if (ops.includes('create')) {
    collection.post = [
      requireJson,
      async (req, res) => {
        const body = withDerived(def, validate<Record<string, unknown>>(schemas.create, req.body));
        const values = toAttributes(def, body);
        const warnings = await def.check?.(values, req);
        const row = await guard('write', () => def.model.create(values as never));
        const after = await afterSaved(def.afterWrite && (() => def.afterWrite!(row)));
        await written(res, 201, row, { ...present(def, row), ...(await def.afterCreate?.(row)), ...warned(warnings, after) });
      },
    ];
  }
  if (Object.keys(collection).length) only(r, def.path, collection);

  const item: Parameters<typeof only>[2] = {};
  if (ops.includes('get')) item.get = async (req, res) => void res.json(present(def, await findRow(def, String(req.params.id)), holds(req, def.family, 'write')));
  if (ops.includes('update')) {
    item.patch = [
      requireJson,
      async (req, res) => {
        const row = await findRow(def, String(req.params.id));
        const body = validate<Record<string, unknown>>(schemas.update, req.body);
        const values = toAttributes(def, body);
        const warnings = await def.check?.(values, req, row);
        const before = row.get({ plain: true, clone: true }) as Record<string, unknown>; // a copy: without clone, the row's own dataValues
        await guard('write', () => row.update(values as never));
        const after = await afterSaved(def.afterWrite && (() => def.afterWrite!(row, before)));
        await written(res, 200, row, { ...present(def, row), ...warned(warnings, after) });
      },
    ];
  }
  if (ops.includes('delete')) {
    item.delete = async (req, res) => {
      const row = await findRow(def, String(req.params.id));
      await guard('delete', () => (def.destroy ? def.destroy(row, req) : row.destroy()));
      const after = await afterSaved(def.afterDelete && (() => def.afterDelete!(row)));
      await written(res, 200, row, { id: row.get('id'), object: def.object, deleted: true, ...warned(after) });
    };
  }
  if (Object.keys(item).length) only(r, `${def.path}/:id`, item);
  return r;
}
