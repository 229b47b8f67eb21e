import { expect } from 'chai';
import { cidrList, inList, isBlockedAddress, isNeverTrusted, parseAddress } from '../../../shared/net/ip-ranges';

/** The SSRF classifier (shared/net/ip-ranges.ts, ipaddr.js) over every notation an attacker could resolve to. */
describe('unit: SSRF address classifier', () => {
  const blocked: Record<string, string[]> = {
    'IPv4 private, loopback, link-local, CGNAT, reserved': ['127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1', '240.0.0.1', '192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.1', '203.0.113.1'],
    'IPv6 loopback, unspecified, unique-local, link-local, site-local, multicast': ['::1', '::', 'fd00:ec2::254', 'FD00::1', 'fc00::1', 'fe80::1', 'fe80::1%eth0', 'fec0::1', 'ff02::1', '100::1', '2001:db8::1', '3fff::1'],
    'IPv4-mapped forms of private addresses': ['::ffff:127.0.0.1', '::FFFF:7f00:1', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '0:0:0:0:0:ffff:c0a8:0101'],
    'IPv4-translated (::ffff:0:a.b.c.d), whatever the IPv4': ['::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:8.8.8.8', '::ffff:0:a9fe:a9fe'],
    'IPv4-compatible and the rest of ::/8': ['::127.0.0.1', '::8.8.8.8', '::a9fe:a9fe', '::1:2'],
    'NAT64 (RFC 6052, RFC 8215), 6to4, Teredo': ['64:ff9b::a00:1', '64:ff9b::8.8.8.8', '64:ff9b::7f00:1', '64:ff9b:1::a9fe:a9fe', '2002:7f00:1::', '2002:0808:0808::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    'not an address in canonical notation': ['not-an-ip', '0177.0.0.1', '2130706433', '0x7f.1', '127.1', '', '1.2.3.4.5', '::ffff:999.0.0.1'],
  };
  for (const [what, list] of Object.entries(blocked)) {
    it(`refuses ${what}`, () => {
      for (const a of list) expect(isBlockedAddress(a), a).to.equal(true);
    });
  }

  it('lets public unicast through, plain or IPv4-mapped', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '::ffff:808:808']) {
      expect(isBlockedAddress(a), a).to.equal(false);
    }
  });

  it('judges a mapped address as the IPv4 it carries', () => {
    expect(parseAddress('::ffff:127.0.0.1')!.toString()).to.equal('127.0.0.1');
    expect(parseAddress('::ffff:0:127.0.0.1')!.kind()).to.equal('ipv6'); // translated: not unwrapped, refused as is
  });

  it('names link-local and the cloud metadata services as never trusted, and nothing else', () => {
    for (const a of ['169.254.169.254', '169.254.170.2', '::ffff:169.254.169.254', 'fe80::1', 'fe80::1%eth0', 'fd00:ec2::254', 'fd00:ec2::23', '100.100.100.200', 'not-an-ip']) expect(isNeverTrusted(a), a).to.equal(true);
    for (const a of ['10.0.0.1', '127.0.0.2', 'fd00::1', '100.100.100.201', '8.8.8.8']) expect(isNeverTrusted(a), a).to.equal(false);
  });

  it('operator CIDR lists match IPv4, mapped IPv4 and IPv6, and refuse malformed entries', () => {
    const l = cidrList(['127.0.0.2/32', '10.9.0.0/16', 'fd12::/16', '192.0.2.7']);
    expect(inList(l, '127.0.0.2')).to.equal(true);
    expect(inList(l, '::ffff:127.0.0.2')).to.equal(true);
    expect(inList(l, '127.0.0.1')).to.equal(false);
    expect(inList(l, '10.9.200.1')).to.equal(true);
    expect(inList(l, 'fd12::5')).to.equal(true);
    expect(inList(l, 'fd13::5')).to.equal(false);
    expect(inList(l, '192.0.2.7')).to.equal(true);
    expect(inList(l, 'garbage')).to.equal(false);
    for (const bad of ['10.0.0.0/33', 'example.com/8', '1.2.3.4/x', 'fd00::/129', '1.2.3.4/', '1.2.3.4/-1']) expect(() => cidrList([bad]), bad).to.throw(/Invalid CIDR/);
  });
});
