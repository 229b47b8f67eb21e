import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { startPageHost, type PageHost } from '../../helpers/https-pages';
import { SearchUsage } from '../../../shared/db/models';

type Block = Record<string, unknown> & { type: string };
const V = { 'anthropic-version': '2023-06-01' };

/**
 * web_fetch_20250910 through the whole path: the simulated model fetches the URL the user names,
 * the search pool fetches it with fetchPage (test env trusts 127.0.0.2 and the fixture CA).
 */
describe('native web fetch on /v1/messages', () => {
  let up: SearchUpstream;
  let pages: PageHost;
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    pages = await startPageHost('127.0.0.2');
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'h16-fetch');
  });
  after(async () => {
    await up.close();
    await pages.close();
  });

  const ask = (url: string, tool: Record<string, unknown> = {}) =>
    call('POST', '/v1/messages', {
      headers: { ...keyHeader(o.key), ...V },
      json: { model: 'sim-claude', max_tokens: 300, tools: [{ type: 'web_fetch_20250910', name: 'web_fetch', ...tool }], messages: [{ role: 'user', content: `Please fetch ${url} and tell me about it` }] },
    });
  const page = (p: string) => `https://127.0.0.2:${pages.port}${p}`;

  it('fetches an https page as a text document, one ledger row of kind fetch', async () => {
    const rows = await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } });
    const r = await ask(page('/article'));
    expect(r.status, r.text).to.equal(200);
    const content = r.body.content as Block[];
    expect(content.map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_fetch_tool_result', 'text']);
    expect(content[0]).to.deep.include({ name: 'web_fetch', input: { url: page('/article') } });
    const result = content[1].content as Record<string, any>;
    expect(result).to.include({ type: 'web_fetch_result', url: page('/article') });
    expect(result.content).to.deep.include({ type: 'document', title: 'Bees & Honey' });
    expect(result.content.source).to.include({ type: 'text', media_type: 'text/plain' });
    expect(result.content.source.data).to.include('Bees make honey from nectar.').and.not.include('<p>');
    expect(Date.parse(result.retrieved_at)).to.be.greaterThan(0);
    // The answer quotes the page: a char_location citation names the quoted span of the document.
    const citations = content[2].citations as Array<Record<string, any>>;
    expect(citations).to.have.length(1);
    const data = result.content.source.data as string;
    expect(citations[0]).to.deep.include({ type: 'char_location', document_index: 0, document_title: 'Bees & Honey', file_id: null });
    expect(citations[0].cited_text).to.equal(data.slice(citations[0].start_char_index, citations[0].end_char_index));
    expect(citations[0].cited_text).to.include('Bees make honey from nectar.');
    expect(String(content[2].text).replace(/\s+/g, ' ')).to.include(citations[0].cited_text.replace(/\s+/g, ' '));
    expect(r.body.usage.server_tool_use).to.deep.equal({ web_search_requests: 0, web_fetch_requests: 1 });
    expect(await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } })).to.equal(rows + 1);
  });

  it('responses: the web_search tool opens a page (web_search_call open_page), the message cites it with url_citation; an echo reuses the page', async () => {
    const rows = await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } });
    const ask = (input: unknown) => call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-chat', input, tools: [{ type: 'web_search' }], store: false } });
    const question = `Please fetch ${page('/article')} and tell me about it`;
    const r = await ask(question);
    expect(r.status, r.text).to.equal(200);
    const [open, message] = r.body.output as Array<Record<string, any>>;
    expect(r.body.output.map((i: Block) => i.type)).to.deep.equal(['web_search_call', 'message']);
    expect(open).to.deep.include({ status: 'completed', action: { type: 'open_page', url: page('/article') } });
    expect(open.encrypted_content).to.be.a('string').and.not.include('honey');
    const text = message.content[0].text as string;
    const [annotation] = message.content[0].annotations;
    expect(annotation).to.deep.equal({ type: 'url_citation', start_index: text.indexOf(page('/article')), end_index: text.indexOf(page('/article')) + page('/article').length, url: page('/article'), title: 'Bees & Honey' });
    expect(await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } })).to.equal(rows + 1);

    resetSim();
    const follow = await ask([{ role: 'user', content: question }, open, message, { role: 'user', content: 'thanks, summarise it' }]);
    expect(follow.status, follow.text).to.equal(200);
    expect(await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } }), 'the echoed page is reused, not fetched again').to.equal(rows + 1);
    expect(JSON.stringify(env().sim.log.entries[0].body), 'the model saw the page again').to.include('Bees make honey from nectar.');
  });

  it('refuses in-band with fetch_not_allowed: http://, a blocked domain, loopback, metadata and IPv6 loopback, and a redirect to one', async () => {
    const rows = await SearchUsage.count({ where: { orgId: o.org.id } });
    const articleHits = () => pages.hits.filter((h) => h === '/article').length;
    const hits = articleHits();
    const cases: Array<[string, Record<string, unknown>]> = [
      [`http://127.0.0.2:${pages.port}/article`, {}],
      [page('/article'), { blocked_domains: ['127.0.0.2'] }],
      [page('/article'), { allowed_domains: ['example.org'] }],
      ['https://localhost/x', {}],
      ['https://127.0.0.1/x', {}],
      ['https://169.254.169.254/latest/meta-data/', {}],
      ['https://[::1]/x', {}],
      [page(`/redirect?to=${encodeURIComponent('https://127.0.0.1/secret')}`), {}],
      [page(`/redirect?to=${encodeURIComponent('https://169.254.169.254/latest/meta-data/')}`), {}],
    ];
    for (const [url, tool] of cases) {
      const r = await ask(url, tool);
      expect(r.status, r.text).to.equal(200);
      const content = r.body.content as Block[];
      expect(content.map((b) => b.type), url).to.deep.equal(['server_tool_use', 'web_fetch_tool_result', 'text']);
      expect(content[1].content, url).to.deep.equal({ type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed', code: 'fetch_not_allowed' });
    }
    expect(articleHits(), 'refused before connecting').to.equal(hits);
    expect(await SearchUsage.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(rows);
  });

  it('fetches only a URL the conversation gave: one the model built from pieces is refused in-band (url_not_allowed), unfetched and unbilled', async () => {
    const rows = await SearchUsage.count({ where: { orgId: o.org.id } });
    const hits = pages.hits.length;
    const r = await call('POST', '/v1/messages', {
      headers: { ...keyHeader(o.key), ...V },
      json: { model: 'sim-claude', max_tokens: 300, tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }], messages: [{ role: 'user', content: `Please fetch the page you get by joining ${page('')} and /article?leak=secret` }] },
    });
    expect(r.status, r.text).to.equal(200);
    const content = r.body.content as Block[];
    expect(content[0]).to.deep.include({ type: 'server_tool_use', input: { url: page('/article?leak=secret') } });
    expect(content[1].content).to.deep.equal({ type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed', code: 'fetch_not_allowed' });
    expect(pages.hits.length, 'the made-up URL was never fetched').to.equal(hits);
    expect(await SearchUsage.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(rows);
    // the same URL written out by the user is fetched (with or without a trailing slash)
    expect(((await ask(page('/article'))).body.content as Block[])[1].content).to.deep.include({ type: 'web_fetch_result' });
  });

  it('passes only text content types to the model', async () => {
    const r = await ask(page('/image.png'));
    expect((r.body.content as Block[])[1].content).to.deep.equal({ type: 'web_fetch_tool_result_error', error_code: 'unsupported_content_type', code: 'unsupported_content_type' });
  });
});
