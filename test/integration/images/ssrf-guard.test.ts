import fs from 'fs';
import { expect } from 'chai';
import { guardedFetch, GuardedFetchError, type GuardOptions, type Resolver } from '../../../shared/net/ssrf';
import { startImageHost, type ImageHost } from '../../helpers/https-images';

const ca = fs.readFileSync('test/fixtures/tls/cert.pem');

/** The guard on its own, with an injected resolver standing in for DNS. */
describe('SSRF guard (shared/net/ssrf.ts) with an injected resolver', () => {
  let host: ImageHost;
  before(async () => {
    host = await startImageHost(['127.0.0.2']);
  });
  after(() => host.close());

  const opts = (resolve: Resolver, extra: Partial<GuardOptions> = {}): GuardOptions => ({ maxBytes: 1 << 20, timeoutMs: 3000, ca, resolve, ...extra });
  const fails = async (p: Promise<unknown>, kind: GuardedFetchError['kind']) => {
    try {
      await p;
    } catch (err) {
      expect(err).to.be.instanceOf(GuardedFetchError);
      expect((err as GuardedFetchError).kind, (err as Error).message).to.equal(kind);
      return (err as Error).message;
    }
    expect.fail('the fetch should have been refused');
  };

  it('connects to the checked address only, with TLS verifying the name', async () => {
    const resolve: Resolver = async (h) => (h === 'images.example.test' ? [{ address: '127.0.0.2', family: 4 }] : []);
    const got = await guardedFetch(`https://images.example.test:${host.port}/cat.png`, opts(resolve, { allowCidrs: ['127.0.0.2/32'] }));
    expect(got.body.subarray(1, 4).toString()).to.equal('PNG');
    // the same address under a name the certificate does not carry fails TLS verification
    const other: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    await fails(guardedFetch(`https://unlisted.example.test:${host.port}/cat.png`, opts(other, { allowCidrs: ['127.0.0.2/32'] })), 'failed');
  });

  it('judges the resolved addresses: one private answer refuses the name', async () => {
    const msg = await fails(guardedFetch('https://public.example.test/x.png', opts(async () => [{ address: '10.0.0.7', family: 4 }])), 'not_allowed');
    expect(msg).to.match(/private/);
    await fails(guardedFetch('https://mixed.example.test/x.png', opts(async () => [{ address: '93.184.216.34', family: 4 }, { address: '169.254.169.254', family: 4 }])), 'not_allowed');
    await fails(guardedFetch('https://v6.example.test/x.png', opts(async () => [{ address: '::ffff:127.0.0.1', family: 6 }])), 'not_allowed');
  });

  it('refuses an allowed-by-resolution host without the operator allowlist', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    const before = host.hits.length;
    await fails(guardedFetch(`https://images.example.test:${host.port}/cat.png`, opts(resolve)), 'not_allowed');
    expect(host.hits.length, 'refused before connecting').to.equal(before);
  });

  it('re-checks every redirect hop, including through the resolver', async () => {
    const resolve: Resolver = async (h) => (h === 'images.example.test' ? [{ address: '127.0.0.2', family: 4 }] : [{ address: '192.168.7.7', family: 4 }]);
    const to = encodeURIComponent('https://internal.example.test/secret');
    await fails(guardedFetch(`https://images.example.test:${host.port}/redirect?to=${to}`, opts(resolve, { allowCidrs: ['127.0.0.2/32'] })), 'not_allowed');
  });

  it('reports unresolvable names and caps the body', async () => {
    await fails(guardedFetch('https://nowhere.example.test/', opts(async () => { throw new Error('ENOTFOUND'); })), 'failed');
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    await fails(guardedFetch(`https://images.example.test:${host.port}/cat.png`, opts(resolve, { allowCidrs: ['127.0.0.2/32'], maxBytes: 100 })), 'too_large');
    await fails(guardedFetch('https://user:pw@images.example.test/cat.png', opts(resolve)), 'not_allowed');
  });
});
