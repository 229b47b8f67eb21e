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
    const url = `https://unlisted.example.test:${host.port}/cat.png`;
    const msg = await fails(guardedFetch(url, opts(other, { allowCidrs: ['127.0.0.2/32'], timeoutMs: 300 })), 'failed');
    // neither Node's message (every name and address of the certificate) nor the error's code
    expect(msg).to.equal(`Error while downloading ${url}.`);
  });

  it('never tells the caller the address a name resolved to, nor its port, nor how the connection failed', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    const msg = await fails(guardedFetch('https://internal.example.test:1/cat.png', opts(resolve, { allowCidrs: ['127.0.0.2/32'], timeoutMs: 300 })), 'failed');
    expect(msg).to.equal('Error while downloading https://internal.example.test:1/cat.png.');
  });

  it('refuses the local and metadata names written fully qualified (trailing dot), without resolving them', async () => {
    const asked: string[] = [];
    const resolve: Resolver = async (h) => {
      asked.push(h);
      return [{ address: '127.0.0.2', family: 4 }];
    };
    for (const name of ['localhost.', 'LOCALHOST.', 'a.localhost.', 'metadata.google.internal.', 'metadata.']) {
      expect(await fails(guardedFetch(`https://${name}:${host.port}/cat.png`, opts(resolve, { allowCidrs: ['127.0.0.2/32'] })), 'not_allowed'), name).to.match(/local or metadata host/);
    }
    expect(asked).to.deep.equal([]);
  });

  it('closes the connection of a redirect or an error answer at once instead of reading its body', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    // the whole-fetch deadline (20 s) is far off: the endless bodies must be cut by the guard itself
    const got = await guardedFetch(`https://images.example.test:${host.port}/endless-redirect`, opts(resolve, { allowCidrs: ['127.0.0.2/32'], timeoutMs: 20_000 }));
    expect(got.url).to.match(/\/cat\.png$/);
    await fails(guardedFetch(`https://images.example.test:${host.port}/endless-error`, opts(resolve, { allowCidrs: ['127.0.0.2/32'], timeoutMs: 20_000 })), 'failed');
    const t0 = Date.now();
    while (!(host.closed.includes('/endless-redirect') && host.closed.includes('/endless-error')) && Date.now() - t0 < 2000) await new Promise((r) => setTimeout(r, 20));
    expect(host.closed, 'both endless answers closed within 2 s').to.include.members(['/endless-redirect', '/endless-error']);
  });

  it('cuts a body that trickles in at the deadline (slow loris)', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    const t0 = Date.now();
    expect(await fails(guardedFetch(`https://images.example.test:${host.port}/trickle.png`, opts(resolve, { allowCidrs: ['127.0.0.2/32'], timeoutMs: 600 })), 'failed')).to.equal(`Error while downloading https://images.example.test:${host.port}/trickle.png.`);
    expect(Date.now() - t0).to.be.below(2000);
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

  it('never opens link-local or a metadata service, whatever the operator allowlist covers', async () => {
    const everything = { allowCidrs: ['0.0.0.0/0', '::/0'], timeoutMs: 1000 };
    for (const address of ['169.254.169.254', '169.254.170.2', '::ffff:169.254.169.254', 'fe80::1', 'fd00:ec2::254', 'fd00:ec2::23', '100.100.100.200']) {
      const resolve: Resolver = async () => [{ address, family: address.includes(':') ? 6 : 4 }];
      expect(await fails(guardedFetch('https://metadata.example.test/latest/meta-data/', opts(resolve, everything)), 'not_allowed'), address).to.match(/metadata/);
    }
    // the same allowlist still opens what it is for
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    expect((await guardedFetch(`https://images.example.test:${host.port}/cat.png`, opts(resolve, everything))).body.length).to.be.above(0);
  });

  it('re-checks every redirect hop, including through the resolver', async () => {
    const resolve: Resolver = async (h) => (h === 'images.example.test' ? [{ address: '127.0.0.2', family: 4 }] : [{ address: '192.168.7.7', family: 4 }]);
    const to = encodeURIComponent('https://internal.example.test/secret');
    await fails(guardedFetch(`https://images.example.test:${host.port}/redirect?to=${to}`, opts(resolve, { allowCidrs: ['127.0.0.2/32'] })), 'not_allowed');
  });

  it('reports unresolvable names and caps the body', async () => {
    await fails(guardedFetch('https://nowhere.example.test/', opts(async () => { throw new Error('ENOTFOUND'); }, { timeoutMs: 300 })), 'failed');
    // a resolver that never answers is held to the deadline too
    const t0 = Date.now();
    await fails(guardedFetch('https://silent-dns.example.test/', opts(() => new Promise(() => {}), { timeoutMs: 300 })), 'failed');
    expect(Date.now() - t0).to.be.below(1500);
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    await fails(guardedFetch(`https://images.example.test:${host.port}/cat.png`, opts(resolve, { allowCidrs: ['127.0.0.2/32'], maxBytes: 100 })), 'too_large');
    await fails(guardedFetch('https://user:pw@images.example.test/cat.png', opts(resolve)), 'not_allowed');
  });
});
