import fs from 'fs';
import https from 'https';
import path from 'path';

/** An https server (the fixture certificate) with web pages for the native fetch tests. */
export interface PageHost {
  port: number;
  hits: string[];
  /** Paths of the never-ending answers (`/stream.bin`) whose connection has closed. */
  closed: string[];
  close(): Promise<void>;
}

const tls = path.resolve('test/fixtures/tls');

export const ARTICLE_HTML = `<!doctype html><html><head><title>Bees &amp; Honey</title><style>p{color:red}</style>
<script>var secret = 1;</script></head><body><h1>Bees</h1><p>Bees make <b>honey</b> from nectar.</p>
<p><a href="https://elsewhere.example/">A link</a></p></body></html>`;

export async function startPageHost(address = '127.0.0.2'): Promise<PageHost> {
  const hits: string[] = [];
  const closed: string[] = [];
  const server = https.createServer({ key: fs.readFileSync(path.join(tls, 'key.pem')), cert: fs.readFileSync(path.join(tls, 'cert.pem')) }, (req, res) => {
    const u = new URL(req.url!, 'https://x');
    hits.push(u.pathname);
    switch (u.pathname) {
      case '/article':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE_HTML);
        return;
      case '/notes.txt':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('plain notes about bees');
        return;
      case '/image.png':
        res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
        return;
      case '/stream.bin':
        // a binary body that never ends, until the client closes the connection
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        {
          const more = () => {
            while (!res.destroyed && res.write(Buffer.alloc(64 * 1024, 1)));
          };
          res.on('drain', more);
          res.once('close', () => closed.push(u.pathname));
          more();
        }
        return;
      case '/huge':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(300_000));
        return;
      case '/slow':
        setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 2000).unref();
        return;
      case '/redirect':
        res.writeHead(302, { location: u.searchParams.get('to')! }).end();
        return;
      default:
        res.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return {
    port: (server.address() as { port: number }).port,
    hits,
    closed,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
