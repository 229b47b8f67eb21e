import fs from 'fs';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageFor } from '../../helpers/images';
import { startImageHost, type ImageHost } from '../../helpers/https-images';
import { startUnreachableHosts, type UnreachableHosts } from '../../helpers/unreachable-hosts';
import { poolModel, simDeployment } from '../../helpers/pool-models';
import { withSettings } from '../../helpers/settings';
import { waitFor } from '../../helpers/wait';
import { fetchPage } from '../../../workers/providers/fetch/page';
import { ApiError } from '../../../shared/errors/ApiError';
import { startSearchUpstream, useSearchProvider } from '../../helpers/search-upstream';

const TIMEOUT = 1200;
/** Words that would tell which connection-level failure happened. */
const DETAIL = /ECONN|EPROTO|EAI_|ENOTFOUND|ERR_TLS|altname|certificate|refused|reset|hang up|socket|in time|timed? ?out|resolve|SSH/i;

/**
 * A caller must not learn from a failed fetch of its URL which ports of a host are open (docs/images.md,
 * The SSRF guard, 6): a closed port, a silent server, a dropped connection, a non-TLS service, a
 * certificate for another name and a name that does not resolve all give one answer (the URL aside),
 * at the fetch's deadline. An HTTP error from a server that answered still says so, without its body.
 */
describe('a URL that gets no answer reads the same whatever failed (no port probing through fetches)', () => {
  let o: TestOrg;
  let hosts: UnreachableHosts;
  let images: ImageHost;
  before(async () => {
    o = await buildOrg(env().redis);
    hosts = await startUnreachableHosts();
    images = await startImageHost(['127.0.0.2']);
  });
  after(async () => {
    await hosts.close();
    await images.close();
  });
  beforeEach(resetSim);

  /** Each way's [status, answer with its URL written <url>], and how long it took. */
  async function answers(ask: (url: string) => Promise<{ status: number; text: string }>): Promise<Array<{ way: string; status: number; body: string; took: number }>> {
    const out = [];
    for (const [way, url] of Object.entries(hosts.urls)) {
      const t0 = Date.now();
      const r = await ask(url);
      out.push({ way, status: r.status, body: r.text.split(url).join('<url>'), took: Date.now() - t0 });
    }
    return out;
  }

  function expectOneAnswer(got: Awaited<ReturnType<typeof answers>>, expected: { status: number; body: string }): void {
    for (const g of got) {
      expect([g.status, g.body], g.way).to.deep.equal([expected.status, expected.body]);
      expect(g.body, g.way).not.to.match(DETAIL);
      // answered at the deadline, not as soon as the failure was known
      expect(g.took, `${g.way} took ${g.took} ms`).to.be.within(TIMEOUT - 20, TIMEOUT + 3000);
    }
  }

  it('image URL uploads: one status, code, message and param for every connection-level failure, unbilled', async () => {
    const before = hosts.connections;
    await withSettings({ IMAGE_FETCH_TIMEOUT_MS: String(TIMEOUT) }, async () => {
      const got = await answers(async (url) => {
        const r = await call('POST', '/v1/images/uploads', { headers: keyHeader(o.key), json: { url } });
        expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
        return r;
      });
      expectOneAnswer(got, {
        status: 400,
        body: JSON.stringify({ error: { code: 'image_fetch_failed', message: 'Error while downloading <url>.', type: 'invalid_request_error', param: 'url' } }),
      });
    });
    expect(hosts.connections - before, 'the silent, dropping, non-TLS and wrong-name hosts were reached').to.be.at.least(4);
  });

  it('an HTTP error from a server that answered says so, at once, without its body', async () => {
    const url = `${images.url()}/missing.png`;
    const r = await call('POST', '/v1/images/uploads', { headers: keyHeader(o.key), json: { url } });
    expect([r.status, r.body.error.code, r.body.error.message]).to.deep.equal([400, 'image_fetch_failed', `Error while downloading ${url}: the server answered HTTP 404.`]);
    expect(r.text).not.to.match(/not found/);
  });

  it('names a long URL cut at 256 characters, so a long URL (image_url takes 20 MB) makes no long error body', async () => {
    const url = `${images.url()}/missing.png?pad=${'a'.repeat(3_000)}`;
    const r = await call('POST', '/v1/images/uploads', { headers: keyHeader(o.key), json: { url } });
    expect([r.status, r.body.error.code]).to.deep.equal([400, 'image_fetch_failed']);
    expect(r.body.error.message).to.equal(`Error while downloading ${url.slice(0, 256)}…: the server answered HTTP 404.`);
    expect(r.text.length).to.be.below(1000);
  });

  it('images inlined for a self-hosted upstream: the same answer for every such failure, no upstream call', async () => {
    const model = await poolModel([simDeployment('vllm')]);
    await withSettings({ IMAGE_FETCH_TIMEOUT_MS: String(TIMEOUT) }, async () => {
      const got = await answers((url) =>
        call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] } }),
      );
      const first = JSON.parse(got[0].body) as { error: { code: string; message: string } };
      expect([got[0].status, first.error.code, first.error.message]).to.deep.equal([400, 'image_fetch_failed', 'Image 1 of the request: Error while downloading <url>.']);
      expectOneAnswer(got, got[0]);
    });
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('the native web fetch: one fetch_failed message for every such failure', async () => {
    const opts = { ca: fs.readFileSync('test/fixtures/tls/cert.pem'), allowCidrs: ['127.0.0.2/32'], timeoutMs: TIMEOUT };
    const got = await answers(async (url) => {
      try {
        await fetchPage(url, opts);
      } catch (err) {
        expect(err, String(err)).to.be.instanceOf(ApiError);
        const e = err as ApiError;
        return { status: e.status, text: JSON.stringify({ code: e.code, message: e.message }) };
      }
      return expect.fail(`${url} was fetched`);
    });
    expectOneAnswer(got, { status: 502, body: JSON.stringify({ code: 'fetch_failed', message: 'Error while downloading <url>.' }) });
  });

  it('the native web fetch in a request: told at the deadline by the pod, the search lane free while it waits', async () => {
    // one search at a time for this org: a failed fetch that kept its lane through the wait would refuse the next
    const one = await buildOrg(env().redis, { laneOverrides: { 'search:default': 1 } });
    const up = await startSearchUpstream();
    try {
      await useSearchProvider(one.org.id, up, 'unreachable-fetch');
      const ask = (url: string) =>
        call('POST', '/v1/messages', {
          headers: { ...keyHeader(one.key), 'anthropic-version': '2023-06-01' },
          json: { model: 'sim-claude', max_tokens: 300, tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }], messages: [{ role: 'user', content: `Please fetch ${url} and tell me about it` }] },
        });
      await withSettings({ WEB_FETCH_TIMEOUT_MS: String(TIMEOUT) }, async () => {
        const t0 = Date.now();
        let firstAnswered = false;
        const first = ask(hosts.urls.closed).then((r) => ((firstAnswered = true), r));
        // the closed port refuses at once: its job ends and frees the lane while the pod waits out the
        // deadline; the second request's fetch starts then (awaited, not a fixed sleep: a loaded CI
        // machine may take longer than a few hundred ms to run the first job)
        const held = () => env().gw.ctx.leases.count(one.org.id, 'search', 'default');
        await waitFor(async () => (await held()) > 0, 400, 2);
        expect(await waitFor(async () => (await held()) === 0, 5000, 5), 'the first fetch frees its lane').to.equal(true);
        expect(firstAnswered, 'the lane is free while the pod still waits out the first fetch').to.equal(false);
        const t1 = Date.now();
        const second = ask(hosts.urls.dropping);
        for (const [r, url, started] of [[await first, hosts.urls.closed, t0], [await second, hosts.urls.dropping, t1]] as const) {
          expect(r.status, r.text).to.equal(200);
          const result = (r.body.content as Array<{ type: string; content?: unknown }>).find((b) => b.type === 'web_fetch_tool_result');
          expect(result?.content, url).to.deep.equal({ type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible', code: 'fetch_failed' });
          expect(r.text).not.to.match(DETAIL);
          const took = Date.now() - started;
          expect(took, `${url} answered after ${took} ms`).to.be.at.least(TIMEOUT - 20);
        }
      });
    } finally {
      await up.close();
    }
  });
});
