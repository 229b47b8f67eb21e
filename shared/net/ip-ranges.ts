import net from 'net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * IANA's `::/8` beyond what ipaddr.js names: IPv4-compatible addresses (`::a.b.c.d`, deprecated) and
 * the rest of the reserved block. Every other special range comes from ipaddr.js's tables.
 */
const RESERVED_V6: Array<[ipaddr.IPv6, number]> = [[ipaddr.IPv6.parse('::'), 8]];

/**
 * An IPv6 address with a dotted IPv4 tail written as two hex groups: ipaddr.js reads any dotted tail
 * as IPv4-mapped (`::8.8.8.8` would become `::ffff:8.8.8.8`), which would hide IPv4-compatible forms.
 */
function hexTail(v6: string): string {
  return v6.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
}

/** ipaddr.js's parse of a string net.isIP accepted. */
function parseValid(a: string): Address {
  return net.isIPv6(a) ? ipaddr.IPv6.parse(hexTail(a)) : ipaddr.IPv4.parse(a);
}

/**
 * A textual IP address (IPv6 zone dropped), parsed; IPv4-mapped IPv6 (`::ffff:a.b.c.d`) becomes the
 * IPv4 it carries. Only canonical notations count (net.isIP): `0177.0.0.1` or `2130706433` are no address.
 */
export function parseAddress(address: string): Address | undefined {
  const a = address.split('%')[0];
  if (!net.isIP(a)) return undefined;
  const parsed = parseValid(a);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

/** An IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-compatible (`::a.b.c.d`) IPv6 address as IPv4. */
export function embeddedIpv4(address: string): string | undefined {
  const a = address.split('%')[0];
  if (!net.isIPv6(a)) return undefined;
  const p = ipaddr.IPv6.parse(hexTail(a)).parts;
  if (p.slice(0, 5).some((x) => x !== 0) || (p[5] !== 0xffff && p[5] !== 0)) return undefined;
  return [p[6] >> 8, p[6] & 255, p[7] >> 8, p[7] & 255].join('.');
}

/**
 * Addresses a server-side fetch must never reach. Only plain public unicast passes: ipaddr.js's
 * `range()` names everything else (private, loopback, link-local with the cloud metadata services,
 * CGNAT, multicast, broadcast, reserved, documentation, benchmarking; and the IPv6 forms that carry
 * or reach an IPv4 address: IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96` and `/48`, 6to4,
 * Teredo), which are all refused. A mapped `::ffff:a.b.c.d` is judged as its IPv4.
 */
export function isBlockedAddress(address: string): boolean {
  const a = parseAddress(address);
  if (!a) return true;
  if (a.range() !== 'unicast') return true;
  return a.kind() === 'ipv6' && RESERVED_V6.some(([range, bits]) => (a as ipaddr.IPv6).match(range, bits));
}

export type CidrList = Array<[Address, number]>;

/** A list of operator-trusted CIDRs (`10.1.2.0/24`, `fd00::/8`, or one address); throws on a malformed entry. */
export function cidrList(cidrs: string[]): CidrList {
  return cidrs.map((c) => {
    const [addr, bits] = c.split('/');
    const a = net.isIP(addr) ? parseValid(addr) : undefined;
    const max = a?.kind() === 'ipv4' ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d+$/.test(bits) ? Number(bits) : NaN;
    if (!a || !(prefix >= 0 && prefix <= max)) throw new Error(`Invalid CIDR '${c}'.`);
    return [a, prefix] as [Address, number];
  });
}

export function inList(list: CidrList, address: string): boolean {
  const a = parseAddress(address);
  return !!a && list.some(([range, bits]) => range.kind() === a.kind() && a.match(range as never, bits));
}

/** Cloud metadata and credential services outside link-local: AWS's IPv6 IMDS and EKS Pod Identity, Alibaba Cloud's metadata. */
const METADATA = cidrList(['fd00:ec2::254/128', 'fd00:ec2::23/128', '100.100.100.200/32']);

/**
 * Addresses no operator allowlist opens: link-local (169.254.0.0/16, fe80::/10), where the cloud
 * metadata and credential services answer (169.254.169.254, ECS's 169.254.170.2, ...), and those
 * services' other addresses. An allowlist meant for an internal asset server (`10.0.0.0/8`,
 * `fd00::/8`, or `0.0.0.0/0` by mistake) must not hand out the machine's cloud credentials.
 */
export function isNeverTrusted(address: string): boolean {
  const a = parseAddress(address);
  return !a || a.range() === 'linkLocal' || inList(METADATA, address);
}
