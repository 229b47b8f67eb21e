import fs from 'fs';
import https from 'https';
import path from 'path';
import { pngOf } from './images';

/** An https server (fixture certificate) that serves test images, redirects and bad answers. */
export interface ImageHost {
  /** https://<host>:<port> */
  url(host?: string): string;
  port: number;
  hits: string[];
  /** Paths whose answer ended (written out, or its connection closed), in that order. */
  closed: string[];
  close(): Promise<void>;
}

const tls = path.resolve('test/fixtures/tls');

export async function startImageHost(hosts: string[] = ['127.0.0.2', '127.0.0.1']): Promise<ImageHost> {
  const png = await pngOf(120, 90);
  const big = Buffer.alloc(11 * 1024 * 1024, 1);
  const hits: string[] = [];
  const closed: string[] = [];
  /** An answer whose body never ends (written as fast as the client reads) until its connection closes. */
  const endless = (res: import('http').ServerResponse) => {
    const more = () => {
      while (!res.destroyed && res.write(Buffer.alloc(64 * 1024, 1)));
    };
    res.on('drain', more);
    more();
  };
  const handler: Parameters<typeof https.createServer>[1] = (req, res) => {
    const u = new URL(req.url!, 'https://x');
    hits.push(`${req.socket.localAddress} ${u.pathname}`);
    res.once('close', () => closed.push(u.pathname));
    switch (u.pathname) {
      case '/cat.png':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
        return;
      case '/fake.png':
        res.writeHead(200, { 'content-type': 'image/png' }).end('<html>not an image</html>');
        return;
      case '/big.png':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': big.length }).end(big);
        return;
      case '/big-chunked.png':
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(png.subarray(0, 64));
        res.end(big);
        return;
      case '/redirect':
        res.writeHead(302, { location: u.searchParams.get('to')! }).end();
        return;
      case '/endless-redirect':
        res.writeHead(302, { location: '/cat.png' });
        endless(res);
        return;
      case '/endless-error':
        res.writeHead(500, { 'content-type': 'text/plain' });
        endless(res);
        return;
      case '/trickle.png':
        // headers at once, then a byte every 100 ms: never too large, never done
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(png.subarray(0, 8));
        {
          const t = setInterval(() => res.write(Buffer.from([0])), 100);
          res.once('close', () => clearInterval(t));
        }
        return;
      case '/slow.png': {
        // the whole image, after `ms` milliseconds: each download succeeds, slowly
        const t = setTimeout(() => res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png), Number(u.searchParams.get('ms') ?? 1000));
        res.once('close', () => clearTimeout(t));
        return;
      }
      case '/loop':
        res.writeHead(302, { location: '/loop' }).end();
        return;
      default:
        res.writeHead(404).end('not found');
    }
  };
  const opts = { key: fs.readFileSync(path.join(tls, 'key.pem')), cert: fs.readFileSync(path.join(tls, 'cert.pem')) };
  const first = https.createServer(opts, handler);
  await new Promise<void>((resolve) => first.listen(0, hosts[0], resolve));
  const port = (first.address() as { port: number }).port;
  const servers = [first];
  for (const h of hosts.slice(1)) {
    const s = https.createServer(opts, handler);
    await new Promise<void>((resolve, reject) => s.once('error', reject).listen(port, h, resolve));
    servers.push(s);
  }
  return {
    port,
    hits,
    closed,
    url: (host = hosts[0]) => `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: async () => {
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
