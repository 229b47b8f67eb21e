import http from 'http';
import { runHttpProcess } from '../shared/run-http-process';
import { createApp } from './app';
import { closeContext, createContext } from './context';
import { config } from '../shared/config/env';
import { serverOptions } from '../shared/http/server-options';

/** Starts the inference app on a port; returns a handle that closes it and its context. */
export async function startWeb(port: number): Promise<{ server: http.Server; close(): Promise<void> }> {
  const ctx = await createContext();
  const server = http.createServer(serverOptions(config()), createApp(ctx));
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

if (require.main === module) runHttpProcess('web', (cfg) => startWeb(cfg.port), (cfg) => cfg.port);
