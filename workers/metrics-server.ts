import http from 'http';
import express from 'express';
import type { RedisClient } from '../shared/redis/connection';
import { healthRouter } from '../api/routes/health/router';
import { probesRouter } from '../shared/health/probes';
import { listen } from '../shared/net/listen';

/** `/healthz`, `/livez`, `/readyz` and `/metrics` for a worker or clock process (METRICS_PORT). */
export async function startMetricsServer(port: number, redis: RedisClient, subscribers: RedisClient[] = []): Promise<http.Server> {
  const app = express();
  app.use(healthRouter({ redis }));
  app.use(probesRouter({ redis, subscribers }));
  const server = http.createServer(app);
  await listen(server, port, 'METRICS_PORT');
  return server;
}
