import type http from 'http';
import { explainListen } from '../startup/explain';

/** Listens on `port`; a port in use rejects with a one-line StartupError naming `variable`. */
export function listen(server: http.Server, port: number, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(explainListen(err, port, variable));
    server.once('error', onError);
    server.listen(port, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
