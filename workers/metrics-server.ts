import http from 'http';
import express from 'express';
import type { Redis } from 'ioredis';
import { healthRouter } from '../api/routes/health/router';

/** `/healthz` and `/metrics` for a worker or clock process. */
export function startMetricsServer(port: number, redis: Redis): Promise<http.Server> {
  const app = express();
  app.use(healthRouter({ redis }));
  return new Promise((resolve) => {
    const server = app.listen(port, () => resolve(server));
  });
}
