import { Router } from 'express';
import type { RedisClient } from '../redis/connection';
import { db } from '../db/sequelize';
import { isDraining } from './readiness';

/** What `/readyz` checks: the process's command connection and its subscriber connections. */
export interface ProbeDeps {
  redis: RedisClient;
  /** Pub/sub connections the process needs (reply channel, cache invalidation, settings). */
  subscribers?: RedisClient[];
}

const PROBE_TIMEOUT_MS = 2000;

function within<T>(p: Promise<T>, ms = PROBE_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * `/livez`: the process runs (its event loop answers); `/readyz`: it can serve now: Redis and
 * Postgres answer, its subscriptions are connected, and it is not draining. Kubernetes: docs/deploy.md.
 */
export function probesRouter(deps: ProbeDeps): Router {
  const r = Router();
  r.get('/livez', (_req, res) => void res.json({ status: 'ok' }));
  r.get('/readyz', async (_req, res) => {
    if (isDraining()) return void res.status(503).json({ status: 'draining', checks: {} });
    const checks: Record<string, string> = {};
    await Promise.all([
      (deps.redis.status === 'ready' ? within(deps.redis.ping()) : Promise.reject(new Error(deps.redis.status))).then(
        () => (checks.redis = 'ok'),
        () => (checks.redis = 'down'),
      ),
      within(db().query('SELECT 1')).then(
        () => (checks.postgres = 'ok'),
        () => (checks.postgres = 'down'),
      ),
    ]);
    if (deps.subscribers?.length) checks.subscriptions = deps.subscribers.every((s) => s.status === 'ready') ? 'ok' : 'down';
    const ready = Object.values(checks).every((v) => v === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  return r;
}
