import http from 'http';
import type { RedisClient } from '../../shared/redis/connection';
import { createApp } from '../../api/app';
import { expressClasses } from '../../shared/http/express-classes';
import { closeContext, createContext, type AppContext } from '../../api/context';
import { createRedis } from '../../shared/redis/connection';
import { startSimulator } from '../../scripts/simulator/server';
import type { Simulator } from '../../scripts/simulator/server';

/** A gateway web app on an ephemeral port, with its own context (caches, reply channel). */
export interface TestGateway {
  url: string;
  ctx: AppContext;
  close(): Promise<void>;
}

export async function startGateway(podId?: string, port = 0): Promise<TestGateway> {
  const ctx = await createContext(podId ?? `test-pod-${Math.random().toString(36).slice(2, 8)}`);
  const app = createApp(ctx);
  // req and res built as the web pod builds them (api/server.ts)
  const server = http.createServer(expressClasses(app), app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    ctx,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeContext(ctx);
    },
  };
}

/** What the root hooks start once for the whole run. */
export interface TestEnv {
  gw: TestGateway;
  sim: Simulator;
  simUrl: string;
  redis: RedisClient;
}

let current: TestEnv | undefined;

export function env(): TestEnv {
  if (!current) throw new Error('test environment not started (hooks.ts)');
  return current;
}

export async function startEnv(): Promise<{ env: TestEnv; stopSim(): Promise<void> }> {
  const s = await startSimulator(0);
  // On the port PUBLIC_BASE_URL names (scripts/test-env.ts), so the image URLs it builds lead back to it.
  const gw = await startGateway(undefined, Number(process.env.TEST_GATEWAY_PORT ?? 0));
  current = { gw, sim: s.sim, simUrl: s.url, redis: createRedis('command') };
  return { env: current, stopSim: s.close };
}

/** Resets simulator knobs and its request log between tests. */
export function resetSim(): void {
  env().sim.knobs.reset();
  env().sim.log.entries.length = 0;
}
