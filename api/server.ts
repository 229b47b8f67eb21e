import http from 'http';
import { config } from '../shared/config/env';
import { logger } from '../shared/logger';
import { closeDb, db } from '../shared/db/sequelize';
import { createApp } from './app';
import { closeContext, createContext } from './context';

/** Starts the inference app on a port; returns a handle that closes it and its context. */
export async function startWeb(port: number): Promise<{ server: http.Server; close(): Promise<void> }> {
  const ctx = await createContext();
  const server = http.createServer({ keepAliveTimeout: 65_000 }, createApp(ctx));
  await new Promise<void>((resolve) => server.listen(port, resolve));
  return {
    server,
    async close() {
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeContext(ctx);
    },
  };
}

if (require.main === module) {
  (async () => {
    const cfg = config();
    await db().authenticate();
    const web = await startWeb(cfg.port);
    logger.info({ port: cfg.port, pod: cfg.podId }, 'web listening');
    const stop = async () => {
      await web.close();
      await closeDb();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
  })().catch((err) => {
    logger.fatal({ err }, 'web failed to start');
    process.exit(1);
  });
}
