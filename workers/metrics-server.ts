import http from 'http';
import express from 'express';
import type { RedisClient } from '../shared/redis/connection';
import { healthRouter } from '../api/routes/health/router';

/** `/healthz` and `/metrics` for a worker or clock process. */
export function startMetricsServer(port: number, redis: RedisClient): Promise<http.Server> {
  const app = express();
  app.use(healthRouter({ redis }));
  return new Promise((resolve) => {
    const server = app.listen(port, () => resolve(server));
  });
}
