import fs from 'fs';
import net from 'net';

/** A TCP port on 127.0.0.1 that was free a moment ago, for a child process to listen on (listenPorts). */
export async function freePort(): Promise<number> {
  return (await listenPorts(1))[0];
}

/**
 * Up to `n` distinct ports on 127.0.0.1 that `candidate` offers (0: any the kernel picks) and that
 * could be listened on, trying at most `tries` candidates; each is held until all are found, so two
 * of them cannot be the same port.
 */
async function heldPorts(n: number, candidate: () => number, tries: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let t = 0; ports.length < n && t < tries; t++) {
      const port = candidate();
      if (port !== 0 && ports.includes(port)) continue;
      const s = net.createServer();
      const ok = await new Promise<boolean>((resolve) => {
        s.once('error', () => resolve(false));
        s.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (!ok) continue;
      servers.push(s);
      ports.push((s.address() as net.AddressInfo).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/** `n` distinct free ports: each is held until all are found, so two calls cannot get the same one. */
export async function freePorts(n: number): Promise<number[]> {
  const ports = await heldPorts(n, () => 0, n);
  if (ports.length < n) throw new Error(`could not find ${n} free ports`);
  return ports;
}

/**
 * `n` distinct free ports for processes that will listen on them later, picked below the kernel's
 * ephemeral range (/proc/sys/net/ipv4/ip_local_port_range, 32768 by default): a port from that range
 * (freePorts) can be taken in between as the local port of any outgoing connection (the other test
 * shards open hundreds), and the listener then fails with EADDRINUSE. Each is held until all are found.
 */
export async function listenPorts(n: number): Promise<number[]> {
  let low = 32768;
  try {
    low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: the default range's start
  }
  const from = 10_000;
  if (low - from < 1000) return freePorts(n);
  const ports = await heldPorts(n, () => from + Math.floor(Math.random() * (low - from)), 200);
  return ports.length === n ? ports : freePorts(n);
}
