import net from 'net';

/**
 * Addresses a server-side fetch must never reach: private, loopback, link-local (which holds the
 * cloud metadata services, 169.254.169.254 and fd00:ec2::254), CGNAT, multicast, reserved and
 * documentation ranges, and IPv6 forms that tunnel to IPv4 (NAT64, 6to4, Teredo).
 */
const BLOCKED_V4 = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const;

const BLOCKED_V6 = [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32],
  ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const;

const blocked = new net.BlockList();
for (const [a, p] of BLOCKED_V4) blocked.addSubnet(a, p, 'ipv4');
for (const [a, p] of BLOCKED_V6) blocked.addSubnet(a, p, 'ipv6');

/** Expands an IPv6 address to its eight 16-bit groups (undefined when it is not one). */
function groups6(address: string): number[] | undefined {
  if (net.isIPv6(address) === false) return undefined;
  let s = address.split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    s = s.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = s.includes('::') ? 8 - h.length - t.length : 0;
  const all = [...h, ...Array(fill).fill('0'), ...t].map((x) => parseInt(x, 16));
  return all.length === 8 ? all : undefined;
}

/** An IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6 address as IPv4. */
export function embeddedIpv4(address: string): string | undefined {
  const g = groups6(address);
  if (!g || g.slice(0, 5).some((x) => x !== 0) || (g[5] !== 0xffff && g[5] !== 0)) return undefined;
  return [g[6] >> 8, g[6] & 255, g[7] >> 8, g[7] & 255].join('.');
}

/** A normalised (family, address) pair: mapped IPv6 addresses are judged as the IPv4 they carry. */
export function normalise(address: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  if (net.isIPv4(address)) return { address, family: 'ipv4' };
  if (!net.isIPv6(address)) return undefined;
  const v4 = embeddedIpv4(address);
  return v4 ? { address: v4, family: 'ipv4' } : { address: address.split('%')[0], family: 'ipv6' };
}

export function isBlockedAddress(address: string): boolean {
  const n = normalise(address);
  if (!n) return true;
  return blocked.check(n.address, n.family);
}

/** A list of operator-trusted CIDRs (`10.1.2.0/24`, `fd00::/8`); throws on a malformed entry. */
export function cidrList(cidrs: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const c of cidrs) {
    const [addr, bits] = c.split('/');
    const family = net.isIPv4(addr) ? 'ipv4' : net.isIPv6(addr) ? 'ipv6' : undefined;
    const prefix = bits === undefined ? (family === 'ipv4' ? 32 : 128) : Number(bits);
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 'ipv4' ? 32 : 128)) {
      throw new Error(`Invalid CIDR '${c}'.`);
    }
    list.addSubnet(addr, prefix, family);
  }
  return list;
}

export function inList(list: net.BlockList, address: string): boolean {
  const n = normalise(address);
  return !!n && list.check(n.address, n.family);
}
