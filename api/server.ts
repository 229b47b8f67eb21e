import http from 'http';
import { runHttpProcess } from '../shared/run-http-process';
import { listen } from '../shared/net/listen';
import { createApp } from './app';
import { closeContext, createContext } from './context';

/** Starts the inference app on a port; returns a handle that closes it and its context. */
export async function startWeb(port: number): Promise<{ server: http.Server; close(): Promise<void> }> {
  const ctx = await createContext();
  const server = http.createServer({ keepAliveTimeout: 65_000 }, createApp(ctx));
  try {
    await listen(server, port, 'PORT');
  } catch (err) {
    await closeContext(ctx);
    throw err;
  }
  return {
    server,
    async close() {
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeContext(ctx);
    },
  };
}

if (require.main === module) runHttpProcess('web', (cfg) => startWeb(cfg.port), (cfg) => cfg.port);
