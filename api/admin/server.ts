import http from 'http';
import { config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { closeDb, db } from '../../shared/db/sequelize';
import { createRedis } from '../../shared/redis/connection';
import { Queues } from '../../shared/queues/queues';
import { createAdminApp } from './app';

export async function startAdmin(port: number): Promise<{ server: http.Server; close(): Promise<void> }> {
  const redis = createRedis('command');
  const queues = new Queues(createRedis('worker'));
  const server = http.createServer(createAdminApp({ redis, queues }));
  await new Promise<void>((resolve) => server.listen(port, resolve));
  return {
    server,
    async close() {
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queues.close();
      redis.disconnect();
    },
  };
}

if (require.main === module) {
  (async () => {
    const cfg = config();
    await db().authenticate();
    const admin = await startAdmin(cfg.adminPort);
    logger.info({ port: cfg.adminPort }, 'admin listening');
    const stop = async () => {
      await admin.close();
      await closeDb();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
  })().catch((err) => {
    logger.fatal({ err }, 'admin failed to start');
    process.exit(1);
  });
}
