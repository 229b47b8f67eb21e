import type { Router } from 'express';
import { adminRouter } from '../admin-router';
import { only } from '../../routes/only';
import type { RedisClient } from '../../../shared/redis/connection';
import type { RouteDoc } from '../openapi/route-doc';
import { findRow } from '../resources/define';
import { modelPools } from '../resources/definitions/pools';
import { PoolState } from '../../../shared/routing/pool-state';
import { poolOfOne } from '../../../shared/catalog/deployments';
import { Model, Provider } from '../../../shared/db/models';

/**
 * `GET /inference-model-pools/{id}/state`: each deployment's live routing state as every worker
 * sees it in Redis: in flight, consecutive failures, cooldown, probe, this minute's rpm/tpm use.
 */
export function poolStateRouter(deps: { redis: RedisClient }): Router {
  const r = adminRouter();
  // Reads only: the tunables matter to picks and verdicts, which this never makes.
  const state = new PoolState(deps.redis, { probeLeaseMs: 0, backoffBaseMs: 0, backoffMaxMs: 0 });
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

export const poolStateDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/inference-model-pools/{id}/state',
    family: 'inference-models',
    summary: "Live routing state of each deployment of the model's pool (health: healthy, cooling_down, awaiting_probe, probing; in flight; consecutive failures; this minute's rpm/tpm use).",
  },
];
