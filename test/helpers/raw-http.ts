import http from 'http';
import { jsonOrUndefined } from './json-text';

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * One HTTP request with the path sent byte for byte (fetch would resolve dot segments and re-encode),
 * so tests can send every spelling of a path a client could.
 */
export function rawRequest(base: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: string | Buffer; localAddress?: string } = {}): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, localAddress: opts.localAddress, headers: { connection: 'close', ...(opts.headers ?? {}), ...(opts.body !== undefined ? { 'content-length': String(Buffer.byteLength(opts.body)) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const body = jsonOrUndefined(text);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}
