import { Router } from 'express';
import type { RedisClient } from '../../../shared/redis/connection';
import { registry } from '../../../shared/metrics';
import { db } from '../../../shared/db/sequelize';

/** `/healthz` (RedisClient and Postgres reachable) and `/metrics` (Prometheus) on every HTTP process. */
export function healthRouter(ctx: { redis: RedisClient }): Router {
  const r = Router();
  r.get('/healthz', async (_req, res) => {
    const checks: Record<string, string> = {};
    await Promise.all([
      ctx.redis.ping().then(() => (checks.redis = 'ok'), () => (checks.redis = 'down')),
      db().authenticate().then(() => (checks.postgres = 'ok'), () => (checks.postgres = 'down')),
    ]);
    const ok = Object.values(checks).every((v) => v === 'ok');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', checks });
  });
  r.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  });
  return r;
}
