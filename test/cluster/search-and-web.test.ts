import crypto from 'crypto';
import { expect } from 'chai';
import type { Cluster } from 'ioredis';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildOrg, type TestOrg } from '../helpers/factories';
import { call, keyHeader, type Reply } from '../helpers/http';
import { Membership, SearchProvider, SearchSetting, SearchUsage, UsageEvent, User } from '../../shared/db/models';
import { encrypt } from '../../shared/crypto';
import { bumpEpoch } from '../../shared/cache/epoch';
import { setPassword } from '../../shared/web/passwords';
import { clusterEnv, usageSettled } from './env';
import { startWorker, type GatewayProcess } from './processes';

const [A, B] = [() => clusterEnv().webs[0].url!, () => clusterEnv().webs[1].url!];
const alphaSearch = (base: string, key: string) => call('POST', '/v1/alpha/search', { base, headers: keyHeader(key), json: { query: 'honey bees', count: 3 } });

async function mcpSearch(base: string, key: string): Promise<CallToolResult> {
  const client = new Client({ name: 'cluster-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  try {
    return (await client.callTool({ name: 'web_search', arguments: { query: 'honey bees', count: 2 } })) as CallToolResult;
  } finally {
    await client.close();
  }
}

/** A cookie jar for one browser: keeps what each answer sets, sends it back to either pod. */
class Jar {
  private cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
  }
  async fetch(url: string, init: RequestInit = {}): Promise<{ res: Response; text: string }> {
    // a browser's Accept: the web interfaces answer HTML to a browser only, a JSON client gets the envelope (docs/web.md)
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml', ...(init.headers as Record<string, string>), cookie: this.header() } });
    this.take(res);
    return { res, text: await res.text() };
  }
}

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/**
 * What the chat suite leaves out, on the cluster: the search pool (entitlement gate, ledger, usage)
 * reached from both pods through the alpha route, the hosted MCP server and native search, and the
 * dashboard's Redis-held sessions and sign-in limiter used from one pod and then the other.
 */
describe('on a Redis Cluster: web search, MCP and dashboard sessions across both pods', () => {
  let searchWorker: GatewayProcess;
  let o: TestOrg;
  before(async function () {
    this.timeout(30_000);
    searchWorker = await startWorker('search-1', ['search']);
    const redis = clusterEnv().redis;
    const provider = await SearchProvider.create({
      name: `brave-cluster-${crypto.randomBytes(3).toString('hex')}`,
      kind: 'brave',
      baseUrl: `${clusterEnv().simUrl}/brave`,
      enabled: true,
      priceMicros: '5000',
      apiKeyEncrypted: encrypt('sim-brave-platform-key'),
    });
    o = await buildOrg(redis);
    // an allowance of 4 searches, no overage: the fifth platform-key search is refused, whichever pod takes it
    await SearchSetting.create({ orgId: o.org.id, monthlyAllowance: 4, overageEnabled: false, defaultProvider: provider.name });
    await bumpEpoch(redis);
  });
  after(() => searchWorker?.stop());
  beforeEach(() => {
    clusterEnv().sim.knobs.reset();
    clusterEnv().sim.log.entries.length = 0;
  });

  it('native search on pod B, then six concurrent searches over both pods: exactly the allowance runs, each once in the ledger and the usage', async () => {
    const native = await call('POST', '/v1/messages', {
      base: B(),
      headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' },
      json: { model: 'sim-chat', max_tokens: 300, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'search for honey bees' }] },
    });
    expect(native.status, native.text).to.equal(200);
    expect((native.body.content as Array<{ type: string }>).map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);

    const six: Reply[] = await Promise.all(Array.from({ length: 6 }, (_, i) => alphaSearch(i % 2 ? B() : A(), o.key)));
    const ok = six.filter((r) => r.status === 200);
    const refused = six.filter((r) => r.status !== 200);
    expect(ok.length, six.map((r) => r.status).join(',')).to.equal(3);
    for (const r of ok) expect(r.body.results).to.have.length(3);
    for (const r of refused) {
      expect(r.status, r.text).to.equal(429);
      expect(r.body.error.code).to.equal('quota_exceeded');
    }
    // the hosted MCP server on pod A sees the same count: the tool answers quota_exceeded in band
    const mcp = await mcpSearch(A(), o.key);
    expect(mcp.isError, JSON.stringify(mcp)).to.equal(true);
    expect(JSON.parse((mcp.content[0] as { text: string }).text).error.code).to.equal('quota_exceeded');

    expect(await SearchUsage.count({ where: { orgId: o.org.id } }), 'ledger rows').to.equal(4);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id, modality: 'web_search' } });
    expect(events.map((e) => e.units), 'one usage event per search that ran').to.deep.equal(Array.from({ length: 4 }, () => ({ web_search_requests: 1 })));
    const searchedUpstream = clusterEnv().sim.log.entries.filter((e) => e.path.startsWith('/brave/'));
    expect(searchedUpstream, 'the provider was called once per search that ran').to.have.length(4);
  });

  it('the MCP server answers on either pod (stateless): a fresh org searches through pod B', async () => {
    const fresh = await buildOrg(clusterEnv().redis);
    const provider = await SearchSetting.findOne({ where: { orgId: o.org.id } });
    await SearchSetting.create({ orgId: fresh.org.id, monthlyAllowance: 1, defaultProvider: provider!.defaultProvider });
    await bumpEpoch(clusterEnv().redis);
    const r = await mcpSearch(B(), fresh.key);
    expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
    expect((r.structuredContent as { results: unknown[] }).results).to.have.length(2);
    expect(await SearchUsage.count({ where: { orgId: fresh.org.id } })).to.equal(1);
  });

  it('a dashboard session made on pod B is honoured on pod A; failed sign-ins on both pods count in one limiter', async () => {
    const email = `cluster-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const user = await User.create({ email, name: 'Cluster Owner' });
    await setPassword(user, 'correct horse battery staple');
    await Membership.create({ userId: user.id, orgId: o.org.id, role: 'owner' });
    const jar = new Jar();
    const form = (csrf: string, password: string) =>
      ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf, email, password }).toString() }) as RequestInit;

    const open = await jar.fetch(`${A()}/dashboard/sign-in`);
    expect(open.res.status).to.equal(200);

    // The limiter runs its scripts by SHA on the node that owns each counter. With every master's
    // script cache empty, failed sign-ins for addresses spread over the masters each answer 401, not 500.
    await Promise.all((clusterEnv().redis as Cluster).nodes('master').map((n) => n.script('FLUSH')));
    let token = csrfOf(open.text);
    for (let i = 0; i < 8; i++) {
      const stranger = await jar.fetch(`${i % 2 ? B() : A()}/dashboard/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: token, email: `nobody-${i}-${email}`, password: 'wrong' }).toString(),
      });
      expect(stranger.res.status, `failed sign-in ${i}: ${stranger.text.slice(0, 200)}`).to.equal(401);
      token = csrfOf(stranger.text);
    }
    // two failures, one on each pod: the limiter's count is shared (draft-8 `RateLimit: "..."; r=<remaining>`)
    const remaining = (res: Response) => Number(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
    const wrong = await jar.fetch(`${A()}/dashboard/sign-in`, form(token, 'not the password'));
    expect(wrong.res.status, wrong.text.slice(0, 300)).to.equal(401);
    const wrongAgain = await jar.fetch(`${B()}/dashboard/sign-in`, form(csrfOf(wrong.text), 'still not it'));
    expect(wrongAgain.res.status).to.equal(401);
    expect(remaining(wrong.res), wrong.res.headers.get('ratelimit') ?? 'no RateLimit header').to.be.a('number').and.above(1);
    expect(remaining(wrongAgain.res), 'pod B saw pod A\'s failure').to.equal(remaining(wrong.res) - 1);

    const signedIn = await jar.fetch(`${B()}/dashboard/sign-in`, form(csrfOf(wrongAgain.text), 'correct horse battery staple'));
    expect(signedIn.res.status, signedIn.text.slice(0, 300)).to.equal(303);
    expect(signedIn.res.headers.get('location')).to.equal('/dashboard');

    const home = await jar.fetch(`${A()}/dashboard`);
    expect(home.res.status).to.equal(303);
    expect(home.res.headers.get('location')).to.equal(`/dashboard/o/${o.org.slug}`);
    const orgPage = await jar.fetch(`${A()}/dashboard/o/${o.org.slug}`);
    expect(orgPage.res.status).to.equal(200);
    expect(orgPage.text).to.contain(email);

    // signed out on pod A: pod B no longer knows the session
    const out = await jar.fetch(`${A()}/dashboard/sign-out`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrfOf(orgPage.text) }).toString() });
    expect(out.res.status).to.equal(303);
    const after = await jar.fetch(`${B()}/dashboard/o/${o.org.slug}`);
    expect(after.res.status).to.equal(303);
    expect(after.res.headers.get('location')).to.match(/sign-in$/);
  });
});
