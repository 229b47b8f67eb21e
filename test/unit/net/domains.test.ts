import { expect } from 'chai';
import { domainRefusal, hostMatches, normaliseHost } from '../../../shared/net/domains';

/** Domain filters compare a URL's hostname (punycode, bracketed IPv6) with entries as clients write them. */
describe('domain filters: both sides normalised', () => {
  it('normalises an entry or a host to the form a URL hostname has', () => {
    const cases: Array<[string, string]> = [
      ['Bücher.DE', 'xn--bcher-kva.de'],
      ['https://user:pw@bücher.de:8443/x?y#z', 'xn--bcher-kva.de'],
      ['.例え.jp.', 'xn--r8jz45g.jp'],
      ['a。b.jp', 'a.b.jp'],
      ['user@Example.COM', 'example.com'],
      ['example.com:443', 'example.com'],
      ['[2001:DB8:0:0::1]', '2001:db8::1'],
      ['[2001:db8::1]:8443', '2001:db8::1'],
      ['https://[::1]/x', '::1'],
      ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
      ['127.0.0.2', '127.0.0.2'],
    ];
    for (const [entry, want] of cases) expect(normaliseHost(entry), entry).to.equal(want);
  });

  it('a Unicode entry matches the punycode host a URL gives, and its subdomains', () => {
    const host = new URL('https://shop.bücher.de/buch').hostname;
    expect(host).to.equal('shop.xn--bcher-kva.de');
    expect(hostMatches(host, 'bücher.de')).to.equal(true);
    expect(hostMatches(host, 'BÜCHER.de.')).to.equal(true);
    expect(hostMatches('xn--bcher-kva.de', 'xn--bcher-kva.de')).to.equal(true);
    expect(hostMatches('bücher.de', 'xn--bcher-kva.de'), 'a Unicode host against a punycode entry').to.equal(true);
    expect(hostMatches('xn--bcher-kva.de', 'bucher.de')).to.equal(false);
    expect(domainRefusal(host, undefined, ['bücher.de'])).to.match(/blocked/);
    expect(domainRefusal(host, ['bücher.de'])).to.equal(undefined);
  });

  it('bracketed IPv6, userinfo and port entries match; an IP entry matches only itself', () => {
    const v6 = new URL('https://[2001:db8::1]:8443/x').hostname;
    expect(hostMatches(v6, '[2001:DB8:0::1]')).to.equal(true);
    expect(hostMatches(v6, '2001:db8::1')).to.equal(true);
    expect(hostMatches(v6, '[2001:db8::2]')).to.equal(false);
    expect(hostMatches('docs.example.org', 'https://user:secret@example.org:8443/')).to.equal(true);
    expect(hostMatches('10.1.2.3', '2.3')).to.equal(false);
    expect(hostMatches('10.1.2.3', '10.1.2.3:443')).to.equal(true);
    expect(domainRefusal(v6, undefined, ['[2001:db8::1]'])).to.match(/blocked/);
  });

  it('still refuses look-alikes and empty entries', () => {
    expect(hostMatches('badexample.org', 'example.org')).to.equal(false);
    expect(hostMatches('example.org', '')).to.equal(false);
    expect(hostMatches('example.org', 'https://')).to.equal(false);
    expect(hostMatches('example.org', 'ex ample.org')).to.equal(false);
  });
});
