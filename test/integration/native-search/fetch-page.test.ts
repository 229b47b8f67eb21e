import fs from 'fs';
import { expect } from 'chai';
import { fetchPage, type FetchPageOptions } from '../../../workers/providers/fetch/page';
import type { Resolver } from '../../../shared/net/ssrf';
import { ApiError } from '../../../shared/errors/ApiError';
import { startPageHost, type PageHost } from '../../helpers/https-pages';

const ca = fs.readFileSync('test/fixtures/tls/cert.pem');

/** The native fetch (workers/providers/fetch) against a local https host; DNS is injected. */
describe('fetchPage: the native web fetch', () => {
  let host: PageHost;
  before(async () => {
    host = await startPageHost('127.0.0.2');
  });
  after(() => host.close());

  // images.example.test is the fixture certificate's name; it "resolves" to the test host.
  const names: Record<string, string> = { 'images.example.test': '127.0.0.2', 'loop.example.test': '127.0.0.1', 'meta.example.test': '169.254.169.254', 'six.example.test': '::1' };
  const resolve: Resolver = async (h) => {
    const a = names[h];
    if (!a) throw new Error('ENOTFOUND');
    return [{ address: a, family: a.includes(':') ? 6 : 4 }];
  };
  const opts = (extra: FetchPageOptions = {}): FetchPageOptions => ({ ca, resolve, allowCidrs: ['127.0.0.2/32'], timeoutMs: 3000, ...extra });
  const page = (p: string) => `https://images.example.test:${host.port}${p}`;
  async function refused(p: Promise<unknown>, code: string): Promise<string> {
    try {
      await p;
    } catch (err) {
      expect(err, String(err)).to.be.instanceOf(ApiError);
      expect((err as ApiError).code, (err as Error).message).to.equal(code);
      return (err as Error).message;
    }
    return expect.fail(`expected ${code}`);
  }

  it('turns an HTML page into text with its title, without scripts, styles or link targets', async () => {
    const got = await fetchPage(page('/article'), opts());
    expect(got).to.include({ url: page('/article'), title: 'Bees & Honey', contentType: 'text/html', truncated: false });
    expect(got.content).to.include('Bees make honey from nectar.');
    expect(got.content).not.to.match(/secret|color:red|elsewhere\.example/);
    expect(Date.parse(got.retrievedAt)).to.be.closeTo(Date.now(), 5000);
    const txt = await fetchPage(page('/notes.txt'), opts());
    expect(txt).to.include({ content: 'plain notes about bees', contentType: 'text/plain' });
    expect(txt.title).to.equal(undefined);
  });

  it('refuses http://, invalid URLs and hosts outside the domain filters, before connecting', async () => {
    const before = host.hits.length;
    expect(await refused(fetchPage(`http://images.example.test:${host.port}/article`, opts()), 'fetch_not_allowed')).to.match(/https/);
    await refused(fetchPage('not a url', opts()), 'fetch_not_allowed');
    expect(await refused(fetchPage(page('/article'), opts({ blockedDomains: ['example.test'] })), 'fetch_not_allowed')).to.match(/blocked/);
    expect(await refused(fetchPage(page('/article'), opts({ allowedDomains: ['bees.org'] })), 'fetch_not_allowed')).to.match(/allowed_domains/);
    expect(host.hits.length, 'nothing reached the host').to.equal(before);
    // subdomains match a filter entry; scheme and path in the entry are ignored
    expect((await fetchPage(page('/notes.txt'), opts({ allowedDomains: ['https://example.test/'] }))).content).to.equal('plain notes about bees');
  });

  it('refuses names resolving to loopback, metadata and IPv6 loopback addresses, and IP literals of them', async () => {
    for (const name of ['loop.example.test', 'meta.example.test', 'six.example.test']) {
      expect(await refused(fetchPage(`https://${name}/x`, opts()), 'fetch_not_allowed'), name).to.match(/private|loopback|metadata/);
    }
    for (const url of ['https://127.0.0.1/x', 'https://169.254.169.254/latest/meta-data/', 'https://[::1]/x', 'https://localhost/x']) {
      await refused(fetchPage(url, opts()), 'fetch_not_allowed');
    }
  });

  it('checks every redirect: to a private address, to a blocked domain, to http://', async () => {
    for (const to of ['https://loop.example.test/x', 'https://169.254.169.254/latest/meta-data/', `https://images.example.test:${host.port}/notes.txt`, 'http://example.com/']) {
      const blocked = to.includes('images.example.test') ? { blockedDomains: ['images.example.test'], allowedDomains: undefined } : {};
      // the first hop itself must pass the filters, so the blocked-domain case starts on an IP literal
      const start = to.includes('images.example.test') ? `https://127.0.0.2:${host.port}/redirect?to=${encodeURIComponent(to)}` : page(`/redirect?to=${encodeURIComponent(to)}`);
      await refused(fetchPage(start, opts(blocked)), 'fetch_not_allowed');
    }
    // an allowed redirect is followed
    expect((await fetchPage(page(`/redirect?to=${encodeURIComponent(page('/notes.txt'))}`), opts())).url).to.equal(page('/notes.txt'));
  });

  it('passes only text content types, caps size, time and text length', async () => {
    expect(await refused(fetchPage(page('/image.png'), opts()), 'unsupported_content_type')).to.include('image/png');
    // refused on its headers: an endless binary body is neither downloaded to the byte cap nor drained
    expect(await refused(fetchPage(page('/stream.bin'), opts({ timeoutMs: 20_000 })), 'unsupported_content_type')).to.include('application/octet-stream');
    const asked = Date.now();
    while (!host.closed.includes('/stream.bin') && Date.now() - asked < 2000) await new Promise((r) => setTimeout(r, 20));
    expect(host.closed, 'its connection closed').to.include('/stream.bin');
    await refused(fetchPage(page('/huge'), opts({ maxBytes: 100_000 })), 'fetch_too_large');
    const cut = await fetchPage(page('/huge'), opts({ maxChars: 1000 }));
    expect(cut).to.include({ truncated: true });
    expect(cut.content).to.have.length(1000);
    const t0 = Date.now();
    expect(await refused(fetchPage(page('/slow'), opts({ timeoutMs: 300 })), 'fetch_failed')).to.equal(`Error while downloading ${page('/slow')}.`);
    expect(Date.now() - t0).to.be.below(1500);
    await refused(fetchPage(page('/missing'), opts()), 'fetch_failed');
    await refused(fetchPage('https://unknown.example.test/', opts({ timeoutMs: 300 })), 'fetch_failed');
  });

  it("stops when the caller's signal aborts", async () => {
    const ac = new AbortController();
    const p = fetchPage(page('/slow'), opts(), ac.signal);
    setTimeout(() => ac.abort(), 100);
    const t0 = Date.now();
    try {
      await p;
      expect.fail('should have stopped');
    } catch {
      expect(Date.now() - t0).to.be.below(1500);
    }
    expect(ac.signal.aborted).to.equal(true);
  });
});
