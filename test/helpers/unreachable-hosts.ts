import fs from 'fs';
import https from 'https';
import net from 'net';
import path from 'path';

/**
 * Hosts on 127.0.0.2 (trusted by the test env's IMAGE_FETCH_ALLOW_CIDRS) that each fail a fetch at
 * the connection level in another way, as ports of a public host would: a closed port, a server that
 * accepts and never answers, one that drops every connection, one that speaks something other than
 * TLS, one whose certificate (signed by the trusted test CA) names another host; and a name that
 * never resolves. `urls` maps each way to an https URL of it; `connections` counts what reached them.
 */
export interface UnreachableHosts {
  urls: Record<'closed' | 'hanging' | 'dropping' | 'notTls' | 'wrongName' | 'unresolvable', string>;
  connections: number;
  close(): Promise<void>;
}

const tls = path.resolve('test/fixtures/tls');
const HOST = '127.0.0.2';

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return (server.address() as net.AddressInfo).port;
}

export async function startUnreachableHosts(): Promise<UnreachableHosts> {
  const sockets: net.Socket[] = [];
  const out = { connections: 0 } as UnreachableHosts;
  const count = (s: net.Socket) => {
    out.connections++;
    sockets.push(s);
  };
  const hanging = net.createServer(count);
  const dropping = net.createServer((s) => (count(s), s.destroy()));
  const notTls = net.createServer((s) => (count(s), s.end('SSH-2.0-OpenSSH_9.6\r\n')));
  const wrongName = https.createServer({ key: fs.readFileSync(path.join(tls, 'other-name-key.pem')), cert: fs.readFileSync(path.join(tls, 'other-name-cert.pem')) }, (_req, res) => res.end('never served'));
  wrongName.on('connection', count);
  // a port that was free a moment ago: nothing listens on it
  const probe = net.createServer();
  const closedPort = await listen(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const servers = [hanging, dropping, notTls, wrongName];
  const [h, d, n, w] = await Promise.all(servers.map(listen));
  const at = (port: number) => `https://${HOST}:${port}/cat.png`;
  out.urls = { closed: at(closedPort), hanging: at(h), dropping: at(d), notTls: at(n), wrongName: at(w), unresolvable: 'https://no-such-host.invalid/cat.png' };
  out.close = async () => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  };
  return out;
}
