import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { startPageHost, type PageHost } from '../../helpers/https-pages';
import { SearchUsage } from '../../../shared/db/models';

type Block = Record<string, unknown> & { type: string };
const V = { 'anthropic-version': '2023-06-01' };

/**
 * Domain filters through the whole path: entries as clients write them (Unicode, userinfo, port,
 * bracketed IPv6) match the hosts of result and page URLs (punycode, bracketed), so a block holds.
 */
describe('native search: domain filters on IDN, IPv6 and userinfo entries', () => {
  let up: SearchUpstream;
  let pages: PageHost;
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    // the upstream writes the IDN host in Unicode, as search APIs often do; URL parsing makes it punycode
    up = await startSearchUpstream(undefined, ['shop.bücher.example', '[2001:db8::1]:8443', 'docs.example.org']);
    pages = await startPageHost('127.0.0.2');
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'n27-domains');
  });
  after(async () => {
    await up.close();
    await pages.close();
  });

  const ask = (tool: Record<string, unknown>, content = 'search for honey bees') =>
    call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-chat', max_tokens: 300, tools: [tool], messages: [{ role: 'user', content }] } });
  const resultUrls = (content: Block[]) => (content.find((b) => b.type === 'web_search_tool_result')!.content as Block[]).map((r) => String(r.url));

  it('messages search: a Unicode and a userinfo/port IPv6 entry in blocked_domains drop those results', async () => {
    const r = await ask({ type: 'web_search_20250305', name: 'web_search', blocked_domains: ['BÜCHER.example', 'user@[2001:DB8:0::1]:443'] });
    expect(r.status, r.text).to.equal(200);
    expect(resultUrls(r.body.content as Block[])).to.deep.equal(['https://docs.example.org/honey-bees/3']);
  });

  it('messages search: a Unicode entry in allowed_domains keeps the punycode host and its subdomains only', async () => {
    const r = await ask({ type: 'web_search_20250305', name: 'web_search', allowed_domains: ['bücher.example.'] });
    expect(r.status, r.text).to.equal(200);
    expect(resultUrls(r.body.content as Block[])).to.deep.equal(['https://shop.bücher.example/honey-bees/1']);
    const punycode = await ask({ type: 'web_search_20250305', name: 'web_search', allowed_domains: ['xn--bcher-kva.example'] });
    expect(resultUrls(punycode.body.content as Block[])).to.deep.equal(['https://shop.bücher.example/honey-bees/1']);
  });

  it('responses: filters.allowed_domains with a bracketed IPv6 entry (not in canonical form) keeps that result', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const r = await client.responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search', filters: { allowed_domains: ['[2001:DB8:0:0::1]'] } }] });
    const ws = r.output[0] as unknown as { action: { sources: Array<{ url: string }> } };
    expect(ws.action.sources.map((s) => s.url)).to.deep.equal(['https://[2001:db8::1]:8443/honey-bees/2']);
  });

  it('messages fetch: an entry with userinfo and port, or in Unicode, blocks before anything is fetched or billed', async () => {
    const rows = await SearchUsage.count({ where: { orgId: o.org.id } });
    const hits = pages.hits.length;
    const cases: Array<[string, string]> = [
      [`https://127.0.0.2:${pages.port}/article`, 'user:pw@127.0.0.2:8443'],
      ['https://bücher.example/article', 'https://BÜCHER.example/'],
    ];
    for (const [url, entry] of cases) {
      const r = await ask({ type: 'web_fetch_20250910', name: 'web_fetch', blocked_domains: [entry] }, `Please fetch ${url} and tell me about it`);
      expect(r.status, r.text).to.equal(200);
      const result = (r.body.content as Block[]).find((b) => b.type === 'web_fetch_tool_result')!;
      expect(result.content, entry).to.deep.equal({ type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed', code: 'fetch_not_allowed' });
      expect(JSON.stringify(env().sim.log.entries.at(-1)!.body), 'the model is told why').to.include("blocked by the request's blocked_domains");
    }
    expect(pages.hits.length, 'nothing reached the page host').to.equal(hits);
    expect(await SearchUsage.count({ where: { orgId: o.org.id } })).to.equal(rows);
  });
});
