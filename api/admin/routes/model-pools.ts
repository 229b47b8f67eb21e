import type { Router } from 'express';
import { adminRouter } from '../admin-router';
import { only } from '../../routes/only';
import type { RedisClient } from '../../../shared/redis/connection';
import type { RouteDoc } from '../openapi/route-doc';
import { findRow, present, warned } from '../resources/define';
import { modelPools, syncPool } from '../resources/definitions/pools';
import Joi from 'joi';
import { validate } from '../../validate';
import { requireJson } from '../../middleware/require-json';
import { ApiError } from '../../../shared/errors/ApiError';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { PoolState } from '../../../shared/routing/pool-state';
import { deploymentsSchema, fallbacksSchema, poolOfOne, type DeploymentSpec } from '../../../shared/catalog/deployments';
import { Model, Provider } from '../../../shared/db/models';

const createBody = Joi.object({
  model: Joi.string().max(200).required(),
  deployments: deploymentsSchema.required(),
  fallbacks: fallbacksSchema,
});

/**
 * What the generic resource (list, get, PATCH) cannot do for a pool, which is its model's:
 * `POST /inference-model-pools` sets the pool of the model named in the body (201), `DELETE
 * /inference-model-pools/{id}` makes it a pool of one again (its first deployment, no fallbacks), and
 * `GET /inference-model-pools/{id}/state` shows each deployment's live routing state as every worker
 * sees it in Redis: in flight, consecutive failures, cooldown, probe, this minute's rpm/tpm use.
 * Plain (not `only`) routes: the generic resource answers the other methods of these paths.
 */
export function modelPoolsRouter(deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  r.post('/inference-model-pools', requireJson, async (req, res) => {
    const body = validate<{ model: string; deployments: DeploymentSpec[]; fallbacks?: string[] }>(createBody, req.body);
    const row = await Model.findOne({ where: { publicId: body.model } });
    if (!row) throw new ApiError(404, 'not_found', `No inference model with public id '${body.model}'.`);
    const values: Record<string, unknown> = { deployments: body.deployments, fallbacks: body.fallbacks ?? [] };
    const warnings = await syncPool(values, row);
    await row.update(values);
    await bumpEpoch(deps.redis);
    res.locals.auditTarget = row.id;
    res.status(201).json({ ...present(modelPools, row), ...warned(warnings) });
  });
  r.delete('/inference-model-pools/:id', async (req, res) => {
    const row = await findRow<Model>(modelPools, String(req.params.id));
    const first = row.deployments?.[0];
    const values: Record<string, unknown> = { fallbacks: [], ...(first ? { deployments: [first] } : {}) };
    const warnings = await syncPool(values, row);
    await row.update(values);
    await bumpEpoch(deps.redis);
    res.locals.auditTarget = row.id;
    res.json({ id: row.id, object: modelPools.object, deleted: true, ...warned(warnings) });
  });
  // Reads only: the tunables matter to picks and verdicts, which this never makes.
  const state = new PoolState(deps.redis, { probeLeaseMs: 0, inflightLeaseMs: 0, backoffBaseMs: 0, backoffMaxMs: 0 });
  only(r, '/inference-model-pools/:id/state', {
    get: async (req, res) => {
      const row = await findRow<Model>(modelPools, String(req.params.id));
      const specs = row.deployments?.length ? row.deployments : poolOfOne(String((await Provider.findByPk(row.providerId))?.name), row.upstreamName);
      const live = await state.inspect(row.id, specs.map((d) => d.name));
      res.json({
        object: 'inference_model_pool_state',
        id: row.id,
        model: row.publicId,
        deployments: specs.map((d, i) => {
          const s = live[i];
          const health = s.coolingForMs > 0 ? 'cooling_down' : s.probing ? 'probing' : s.fails > 0 ? 'awaiting_probe' : 'healthy';
          return {
            ...d,
            health,
            in_flight: s.inFlight,
            consecutive_failures: s.fails,
            cooldown_remaining_ms: s.coolingForMs,
            rpm_used: s.rpmUsed,
            tpm_used: s.tpmUsed,
          };
        }),
      });
    },
  });
  return r;
}

export const modelPoolsDocs: RouteDoc[] = [
  { method: 'post', path: '/inference-model-pools', family: 'inference-models', summary: "Sets the pool (deployments, fallbacks) of the model named by `model` (its public id).", body: createBody, created: true, warns: true },
  { method: 'delete', path: '/inference-model-pools/{id}', family: 'inference-models', summary: 'Makes the model a pool of one again (its first deployment) without fallbacks; the model stays.', warns: true },
  {
    method: 'get',
    path: '/inference-model-pools/{id}/state',
    family: 'inference-models',
    summary: "Live routing state of each deployment of the model's pool (health: healthy, cooling_down, awaiting_probe, probing; in flight; consecutive failures; this minute's rpm/tpm use).",
  },
];
