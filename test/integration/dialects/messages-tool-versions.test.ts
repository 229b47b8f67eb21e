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
 * Tool declarations of SDK 1.16 the gateway refused or let past its search rails:
 * - toolsets have no `name` (BrowserToolset20260801, ComputerToolset20260801, the beta's
 *   BetaMCPToolset `mcp_toolset`); Anthropic takes them, the gateway answered 400 "tools[0].name is
 *   required", on an Anthropic-native upstream too;
 * - `web_fetch_20260209`, `_20260309` and `_20260318` are the fetch tool of `web_fetch_20250910` with
 *   the same fields; only the first was run on the gateway's rails, so a newer one went to an
 *   Anthropic-native upstream unmetered by the organization's search ledger and was refused 400
 *   `unsupported_tool` on a translated one.
 */
describe('messages dialect: toolsets and newer web_fetch versions', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  let up: SearchUpstream;
  let pages: PageHost;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    pages = await startPageHost('127.0.0.2');
    o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), ...V };
    await useSearchProvider(o.org.id, up, 'msg-fetch-versions');
  });
  after(async () => {
    await up.close();
    await pages.close();
  });
  const messages = [{ role: 'user', content: 'use the tools' }];

  it('toolsets without a name reach an Anthropic-native upstream as sent; a translated one refuses them by type; a custom tool still needs its name', async () => {
    const toolsets = [
      { type: 'mcp_toolset', mcp_server_name: 'crm' },
      { type: 'browser_toolset_20260801' },
      { type: 'computer_toolset_20260801', configs: null },
    ];
    const mcp_servers = [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'crm' }];
    const r = await call('POST', '/v1/messages', { headers: h, json: { model: 'sim-claude', max_tokens: 50, messages, tools: toolsets, mcp_servers } });
    expect(r.status, r.text).to.equal(200);
    expect((env().sim.log.entries[0].body as { tools: unknown }).tools).to.deep.equal(toolsets);
    const translated = await call('POST', '/v1/messages', { headers: h, json: { model: 'sim-chat', max_tokens: 50, messages, tools: [{ type: 'browser_toolset_20260801' }] } });
    expect(translated.status, translated.text).to.equal(400);
    expect(translated.body.error).to.include({ code: 'unsupported_tool' });
    const nameless = await call('POST', '/v1/messages', { headers: h, json: { model: 'sim-claude', max_tokens: 50, messages, tools: [{ input_schema: { type: 'object' } }] } });
    expect(nameless.status, nameless.text).to.equal(400);
    expect(nameless.body.error.message).to.include('name');
    expect(env().sim.log.entries).to.have.length(1);
  });

  for (const type of ['web_fetch_20260209', 'web_fetch_20260309', 'web_fetch_20260318']) {
    it(`${type} runs on the gateway's rails, as web_fetch_20250910 does, on an Anthropic-native and a translated upstream`, async () => {
      const url = `https://127.0.0.2:${pages.port}/article`;
      for (const model of ['sim-claude', 'sim-chat']) {
        const rows = await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } });
        resetSim();
        const r = await call('POST', '/v1/messages', { headers: h, json: { model, max_tokens: 300, tools: [{ type, name: 'web_fetch', use_cache: true }], messages: [{ role: 'user', content: `Please fetch ${url} and tell me about it` }] } });
        expect(r.status, `${model} ${r.text}`).to.equal(200);
        expect((r.body.content as Block[]).map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_fetch_tool_result', 'text']);
        expect(r.body.usage.server_tool_use).to.deep.equal({ web_search_requests: 0, web_fetch_requests: 1 });
        expect(await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } }), model).to.equal(rows + 1);
        // the upstream was offered the gateway's function tool, never the server tool
        const sent = JSON.stringify(env().sim.log.entries[0].body);
        expect(sent, model).not.to.include(type);
      }
    });
  }
  it("a web_fetch tool's url_sources that narrows where URLs may come from is refused 400 (not ignored), before anything is sent; every source 'all' is served", async () => {
    const url = `https://127.0.0.2:${pages.port}/article`;
    for (const type of ['web_fetch_20250910', 'web_fetch_20260318']) {
      for (const url_sources of [{ client_tool_results: { type: 'none' } }, { user_input: { type: 'none' } }, { server_tool_results: { type: 'only', tools: [{ type: 'tool_reference', name: 'web_search' }] } }]) {
        const r = await call('POST', '/v1/messages', { headers: h, json: { model: 'sim-chat', max_tokens: 300, tools: [{ type, name: 'web_fetch', url_sources }], messages: [{ role: 'user', content: `Please fetch ${url}` }] } });
        expect(r.status, `${type} ${JSON.stringify(url_sources)} ${r.text}`).to.equal(400);
        expect(r.body.error.message).to.include("'url_sources'");
      }
    }
    expect(env().sim.log.entries).to.have.length(0);
    const all = { user_input: { type: 'all' }, client_tool_results: { type: 'all' }, server_tool_results: { type: 'all' } };
    const r = await call('POST', '/v1/messages', { headers: h, json: { model: 'sim-chat', max_tokens: 300, tools: [{ type: 'web_fetch_20260318', name: 'web_fetch', url_sources: all }], messages: [{ role: 'user', content: `Please fetch ${url} and tell me about it` }] } });
    expect(r.status, r.text).to.equal(200);
  });
});
