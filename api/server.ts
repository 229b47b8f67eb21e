import http from 'http';
import express from 'express';
import { runHttpProcess } from '../shared/run-http-process';
import { listen } from '../shared/net/listen';
import { createApp } from './app';
import { closeContext, createContext } from './context';
import { healthRouter } from './routes/health/router';
import { config } from '../shared/config/env';
import { serverOptions } from '../shared/http/server-options';
import { expressClasses } from '../shared/http/express-classes';
import { startTracing, stopTracing } from '../shared/tracing/trace';
import { drainBackground } from './routes/responses/background';
import { startAdopting } from './routes/responses/background-resume';
import { startImageSpoolSweep } from '../shared/spool/spool';
import { metaValidators } from '../shared/json-schema/tool-schemas';

/** How long a stopping web pod lets its background responses finish before it hands them to another pod (or ends them failed). */
const BACKGROUND_DRAIN_MS = 20_000;

/** `/metrics` and `/healthz` without a token on METRICS_PORT, a port the operator keeps private. */
async function startMetricsPort(port: number, ctx: { redis: import('../shared/redis/connection').RedisClient }): Promise<http.Server> {
  const app = express();
  app.disable('x-powered-by');
  app.use(healthRouter(ctx));
  const server = http.createServer(app);
  await listen(server, port, 'METRICS_PORT');
  return server;
}

/** Starts the inference app on a port; returns a handle that closes it and its context. */
export async function startWeb(port: number): Promise<{ server: http.Server; close(): Promise<void> }> {
  startTracing('gateway-web'); // before createApp, which mounts the request spans when it is on
  const ctx = await createContext();
  const app = createApp(ctx);
  metaValidators(); // the chat and Responses tool schemas' check (shared/json-schema/tool-schemas.ts) compiled before the first request
  const server = http.createServer({ ...serverOptions(config()), ...expressClasses(app) }, app);
  try {
    await listen(server, port, 'PORT');
  } catch (err) {
    await closeContext(ctx);
    throw err;
  }
  const metricsPort = config().metricsPort;
  const metrics = metricsPort ? await startMetricsPort(metricsPort, ctx) : undefined;
  // background responses whose pod was lost are resumed here (background-resume.ts)
  const stopAdopting = startAdopting(ctx);
  // image file parts a web pod that died mid-upload left in the spool (shared/spool/spool.ts)
  const stopSweep = startImageSpoolSweep(config().requestTimeoutMs + 60_000);
  return {
    server,
    async close() {
      stopSweep();
      await stopAdopting();
      metrics?.closeAllConnections();
      await new Promise<void>((resolve) => (metrics ? metrics.close(() => resolve()) : resolve()));
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await drainBackground(ctx, BACKGROUND_DRAIN_MS);
      await closeContext(ctx);
      await stopTracing();
    },
  };
}

if (require.main === module) runHttpProcess('web', (cfg) => startWeb(cfg.port), (cfg) => cfg.port);
