import { expect } from 'chai';
import { openPage, openResult, openResults, sealPage, sealResult, sealResults } from '../../../api/dispatch/native-search/seal';
import { encrypt } from '../../../shared/crypto';
import { citedDocuments, citedSources, quotedSpan } from '../../../api/dispatch/native-search/citations';
import { locationCountry } from '../../../api/dispatch/native-search/tools';
import { countryName } from '../../../workers/providers/search/tavily';
import { anthropicToolErrorCode, messagesNativeTools } from '../../../api/dialects/messages/native';
import { responsesNativeTools } from '../../../api/dialects/responses/native';
import { domainRefusal, hostMatches } from '../../../shared/net/domains';
import { answerFromToolResult, searchToolCall } from '../../../scripts/simulator/search-tools';

const item = { title: 'T', url: 'https://a.example/x', snippet: 'S', score: 1 };

describe('native search: pieces', () => {
  it('seals results so only the gateway can open them, for the organization they were made for', () => {
    const s = sealResult('org-a', 'q', 'brave', item);
    expect(s).not.to.include('a.example');
    expect(openResult(s, 'org-a')).to.deep.equal({ v: 2, org: 'org-a', query: 'q', provider: 'brave', item });
    expect(openResult(s, 'org-b'), "another organization's seal").to.equal(undefined);
    for (const bad of ['', undefined, 'v1.AAAA.BBBB.CCCC', s.slice(0, -4) + 'AAAA', 42]) expect(openResult(bad, 'org-a')).to.equal(undefined);
    expect(openResult(encrypt(JSON.stringify({ v: 1, query: 'q', provider: 'brave', item })), 'org-a'), 'a seal of before version 2 names no organization').to.equal(undefined);
    expect(openResults(sealResults('org-a', 'q', 'brave', [item]), 'org-a')?.items).to.deep.equal([item]);
    expect(openResults(sealResults('org-a', 'q', 'brave', [item]), 'org-b')).to.equal(undefined);
    expect(openResults(s, 'org-a'), 'a single-result seal is not a result set').to.equal(undefined);
    const page = { url: 'https://a.example/p', title: 'P', content: 'text' };
    expect(openPage(sealPage('org-a', page), 'org-a')).to.deep.equal(page);
    expect(openPage(sealPage('org-a', page), 'org-b')).to.equal(undefined);
  });

  it('cites each mentioned result once, in order of mention', () => {
    const results = [item, { ...item, url: 'https://b.example/y', title: 'B' }, { ...item, url: 'https://c.example/' }];
    const text = 'See https://b.example/y and https://a.example/x, again https://b.example/y.';
    expect(citedSources(text, results).map((c) => [c.url, c.start, c.end])).to.deep.equal([
      ['https://b.example/y', 4, 23],
      ['https://a.example/x', 28, 47],
    ]);
    expect(citedSources('no links', results)).to.deep.equal([]);
  });

  it('cites a fetched page by the span of it the text quotes, else its opening', () => {
    const page = { url: 'https://p.example/a', title: 'P', content: 'Intro line.\nBees make   honey\nfrom nectar. The end.' };
    expect(quotedSpan(page.content, 'Title: P Bees make honey from nectar. More')).to.deep.equal({ start: 12, end: 12 + 'Bees make   honey\nfrom nectar.'.length });
    expect(quotedSpan(page.content, 'nothing quoted here at all')).to.equal(undefined);
    const text = 'According to https://p.example/a: Bees make honey from nectar.';
    const [c] = citedDocuments(text, [{ url: 'https://other.example/', title: null, content: 'x' }, page]);
    expect([c.index, c.start, c.end, page.content.slice(c.charStart, c.charEnd)]).to.deep.equal([1, 13, 32, 'Bees make   honey\nfrom nectar.']);
    const [opening] = citedDocuments('See https://p.example/a.', [page]);
    expect([opening.charStart, opening.charEnd]).to.deep.equal([0, page.content.length]);
    expect(citedDocuments('no link', [page])).to.deep.equal([]);
  });

  it('reads user_location as a country code; Tavily takes the country name', () => {
    expect(locationCountry({ type: 'approximate', country: 'de' })).to.equal('DE');
    for (const bad of [undefined, null, {}, { country: 'Germany' }, { country: 7 }]) expect(locationCountry(bad)).to.equal(undefined);
    expect(countryName('DE')).to.equal('germany');
    expect(countryName('US')).to.equal('united states');
  });

  it("maps the gateway's codes to Anthropic's error codes per tool", () => {
    expect(anthropicToolErrorCode('search', 'quota_exceeded')).to.equal('too_many_requests');
    expect(anthropicToolErrorCode('search', 'web_search_disabled')).to.equal('unavailable');
    expect(anthropicToolErrorCode('search', 'query_too_long')).to.equal('query_too_long');
    expect(anthropicToolErrorCode('fetch', 'fetch_not_allowed')).to.equal('url_not_allowed');
    expect(anthropicToolErrorCode('fetch', 'fetch_failed')).to.equal('url_not_accessible');
    expect(anthropicToolErrorCode('fetch', 'fetch_too_large')).to.equal('content_too_large');
    expect(anthropicToolErrorCode('fetch', 'max_uses_exceeded')).to.equal('max_uses_exceeded');
  });

  it('detects the server tools of each dialect and leaves the rest', () => {
    const m = messagesNativeTools({
      model: 'm',
      max_tokens: 1,
      messages: [],
      tools: [
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['a.example'], user_location: { type: 'approximate', country: 'fr', city: 'Lyon' } } as never,
        { type: 'web_fetch_20250910', name: 'web_fetch', blocked_domains: ['b.example'], max_content_tokens: 100 } as never,
        { name: 'mine', input_schema: {} },
        { type: 'bash_20250124', name: 'bash' },
      ],
    });
    expect(m.set).to.deep.equal({
      search: { kind: 'search', maxUses: 3, allowedDomains: ['a.example'], blockedDomains: undefined, maxChars: undefined, country: 'FR' },
      fetch: { kind: 'fetch', maxUses: undefined, allowedDomains: undefined, blockedDomains: ['b.example'], maxChars: 400, country: undefined },
    });
    expect(m.rest.map((t) => t.name)).to.deep.equal(['mine', 'bash']);
    const r = responsesNativeTools({ model: 'm', input: 'x', tools: [{ type: 'web_search_preview' }, { type: 'function', name: 'f' }, { type: 'web_search', filters: { allowed_domains: ['a.example'] } }] });
    expect(r.set.search?.allowedDomains).to.deep.equal(['a.example']);
    expect(r.set.fetch, 'the hosted tool also opens pages').to.deep.equal({ kind: 'fetch', allowedDomains: ['a.example'] });
    expect(r.rest.map((t) => t.type)).to.deep.equal(['function']);
  });

  it('matches domain filters on the host and its subdomains', () => {
    expect(hostMatches('docs.example.org', 'example.org')).to.equal(true);
    expect(hostMatches('example.org', 'https://Example.org/path')).to.equal(true);
    expect(hostMatches('badexample.org', 'example.org')).to.equal(false);
    expect(domainRefusal('a.example', undefined, ['example'])).to.match(/blocked/);
    expect(domainRefusal('a.example', ['b.example'])).to.match(/allowed_domains/);
    expect(domainRefusal('a.example', ['a.example'], [])).to.equal(undefined);
  });

  it('the simulated model searches or fetches when asked, and cites the first URL of a result', () => {
    expect(searchToolCall(['web_search'], 'Please search for honey bees', 0)).to.deep.equal({ name: 'web_search', input: { query: 'honey bees' } });
    expect(searchToolCall(['web_search'], 'hello there', 0)).to.equal(undefined);
    expect(searchToolCall(['web_search'], 'search for bees', 1), 'answers after a result').to.equal(undefined);
    expect(searchToolCall(['web_search'], 'search for bees and keep searching', 1)).to.deep.equal({ name: 'web_search', input: { query: 'bees (2)' } });
    expect(searchToolCall(['web_fetch', 'web_search'], 'fetch https://x.example/a.', 0)).to.deep.equal({ name: 'web_fetch', input: { url: 'https://x.example/a' } });
    expect(answerFromToolResult('[1] T\nhttps://a.example/x\nSnippet here')).to.equal('According to https://a.example/x: Snippet here');
    expect(answerFromToolResult('Error: quota_exceeded: no')).to.equal(undefined);
  });
});
