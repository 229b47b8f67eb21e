import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { sdkFinalMessage, sdkFinalResponse } from '../../helpers/sdk-streams';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { startPageHost, type PageHost } from '../../helpers/https-pages';
import { expectAnthropic, expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';

/**
 * Answers that carry the gateway's own web search and fetch (docs/native-search.md): web_search_call
 * items, url_citation annotations and their events on the responses dialect; server_tool_use,
 * web_search_tool_result, web_fetch_tool_result and citations on the messages dialect.
 */
describe('conformance: native search answers against the vendored documents', () => {
  let up: SearchUpstream;
  let pages: PageHost;
  let o: TestOrg;
  let h: Record<string, string>;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    pages = await startPageHost('127.0.0.2');
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'conform-search');
    h = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' };
  });
  after(async () => {
    await up.close();
    await pages.close();
  });

  it('responses: a searched, cited Response and every event of its stream', async () => {
    const json = { model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }] };
    const r = await call('POST', '/v1/responses', { headers: h, json });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.output.map((i: { type: string }) => i.type)).to.deep.equal(['web_search_call', 'message']);
    expect(r.body.output[1].content[0].annotations).to.have.length(1);
    expectOpenAI('Response', withoutNullUser(r.body));
    const s = await postSse('/v1/responses', h, { ...json, stream: true });
    expect(s.status, s.text).to.equal(200);
    expect(s.events.map((e) => e.event)).to.include.members(['response.web_search_call.completed', 'response.output_text.annotation.added']);
    for (const e of s.events) expectResponsesEvent(responsesEventForDocument(e.data));
    expect((await sdkFinalResponse(s.events.map((e) => e.data))).output.map((i) => i.type)).to.deep.equal(['web_search_call', 'message']);
  });

  it('messages: server_tool_use, web_search_tool_result and cited text, JSON and streamed', async () => {
    const json = { model: 'sim-claude', max_tokens: 300, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'search for honey bees' }] };
    const r = await call('POST', '/v1/messages', { headers: h, json });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.content.map((b: { type: string }) => b.type)).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);
    expectAnthropic('Message', r.body);
    const s = await postSse('/v1/messages', h, { ...json, stream: true });
    expect(s.status, s.text).to.equal(200);
    for (const e of s.events) expectAnthropic('StreamEvent', e.data);
    expect((await sdkFinalMessage(s.events.map((e) => e.data))).content.map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);
  });

  it('messages: a web_fetch_tool_result with its document', async () => {
    const url = `https://127.0.0.2:${pages.port}/article`;
    const r = await call('POST', '/v1/messages', {
      headers: h,
      json: { model: 'sim-claude', max_tokens: 300, tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }], messages: [{ role: 'user', content: `Please fetch ${url} and tell me about it` }] },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.content.map((b: { type: string }) => b.type)).to.deep.equal(['server_tool_use', 'web_fetch_tool_result', 'text']);
    expectAnthropic('Message', r.body);
  });
});
