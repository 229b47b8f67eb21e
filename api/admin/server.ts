import http from 'http';
import { runHttpProcess } from '../../shared/run-http-process';
import { listen } from '../../shared/net/listen';
import { createRedis } from '../../shared/redis/connection';
import { Queues } from '../../shared/queues/queues';
import { createAdminApp } from './app';
import { config } from '../../shared/config/env';
import { serverOptions } from '../../shared/http/server-options';
import { expressClasses } from '../../shared/http/express-classes';

export async function startAdmin(port: number): Promise<{ server: http.Server; close(): Promise<void> }> {
  const redis = createRedis('command');
  const queues = new Queues(createRedis('producer'));
  const app = createAdminApp({ redis, queues });
  const server = http.createServer({ ...serverOptions(config()), ...expressClasses(app) }, app);
  try {
    await listen(server, port, 'ADMIN_PORT');
  } catch (err) {
    await queues.close();
    redis.disconnect();
    throw err;
  }
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

if (require.main === module) runHttpProcess('admin', (cfg) => startAdmin(cfg.adminPort), (cfg) => cfg.adminPort);
