import { PoolState } from '../../shared/routing/pool-state';
import { config } from '../../shared/config/env';
import type { WorkerRuntime } from '../runtime';

/** A worker process's view of the model pools' shared state in Redis (health, in flight, limits), with the process's settings. */
export function poolState(rt: WorkerRuntime): PoolState {
  const cfg = config();
  return new PoolState(rt.redis, {
    probeLeaseMs: Math.min(cfg.poolFirstByteTimeoutMs, 30_000),
    inflightLeaseMs: cfg.poolInflightLeaseMs,
    backoffBaseMs: cfg.poolBackoffBaseMs,
    backoffMaxMs: cfg.poolBackoffMaxMs,
  });
}
