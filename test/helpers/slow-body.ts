import http from 'http';
import type { Reply } from './http';
import { jsonOrUndefined } from './json-text';

/**
 * Sends the headers and `partial` of a body that declares `declared` bytes, then stalls; resolves
 * with the answer and the ms it took. The socket is destroyed once the answer has been read.
 */
export function slowPost(url: string, headers: Record<string, string>, partial: string | Buffer, declared: number): Promise<Reply & { ms: number }> {
  const u = new URL(url);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...headers, 'content-length': declared } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          const body = jsonOrUndefined(text);
          resolve({ status: res.statusCode!, headers: h, body, text, ms: Date.now() - started });
          req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.write(partial);
  });
}
