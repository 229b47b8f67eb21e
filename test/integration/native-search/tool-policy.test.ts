import { expect } from 'chai';
import crypto from 'crypto';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { startPageHost, type PageHost } from '../../helpers/https-pages';
import { expectErrorEnvelope } from '../../helpers/errors';
import { Membership, SearchUsage, User } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';
import { bumpEpoch } from '../../../shared/cache/epoch';

type Block = Record<string, unknown> & { type: string };
const V = { 'anthropic-version': '2023-06-01' };

/**
 * MCP tool policies where the org allows and the user denies (the user's entry wins), and a deny of
 * `web_fetch` alone (searches go on): each refused call is `mcp_tool_disabled` and bills nothing.
 */
describe('tool policies: a user deny under an org allow, and a web_fetch deny', () => {
  let up: SearchUpstream;
  let pages: PageHost;
  let o: TestOrg;
  let memberKey: string;
  let memberId: string;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    pages = await startPageHost('127.0.0.2');
    o = await buildOrg(env().redis, { policies: { mcp_tools: { web_search: 'allow', web_fetch: 'allow', generate_image: 'allow' } } });
    await useSearchProvider(o.org.id, up, `policy-${crypto.randomBytes(3).toString('hex')}`);
    const u = await User.create({ email: `policy-${crypto.randomBytes(4).toString('hex')}@example.com`, name: 'Member' });
    await Membership.create({ orgId: o.org.id, userId: u.id, role: 'member' });
    memberId = u.id;
    memberKey = (await createApiKey(env().redis, { orgId: o.org.id, userId: u.id })).key;
  });
  after(async () => {
    await up.close();
    await pages.close();
  });

  const setUserTools = async (tools: Record<string, string>) => {
    await User.update({ policies: { mcp_tools: tools } }, { where: { id: memberId } });
    await bumpEpoch(env().redis);
  };
  const alphaSearch = (key: string) => call('POST', '/v1/alpha/search', { headers: keyHeader(key), json: { query: 'bees' } });
  const fetchAsk = (key: string) =>
    call('POST', '/v1/messages', {
      headers: { ...keyHeader(key), ...V },
      json: { model: 'sim-claude', max_tokens: 300, tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }], messages: [{ role: 'user', content: `Please fetch https://127.0.0.2:${pages.port}/article and tell me about it` }] },
    });
  const billed = () => SearchUsage.count({ where: { orgId: o.org.id } });

  it('the org allows web_search and the user denies it: the member is refused (403 mcp_tool_disabled), the org key searches', async () => {
    await setUserTools({ web_search: 'deny' });
    const rows = await billed();
    const refused = await alphaSearch(memberKey);
    expect(refused.status, refused.text).to.equal(403);
    expectErrorEnvelope(refused.text, 'mcp_tool_disabled');
    expect(await billed(), 'nothing billed').to.equal(rows);
    expect((await alphaSearch(o.key)).status).to.equal(200);
    expect(await billed()).to.equal(rows + 1);
  });

  it('the org allows web_fetch and the user denies it: the member\'s native fetch gets the in-band mcp_tool_disabled and is not billed; their search and the org key\'s fetch work', async () => {
    await setUserTools({ web_fetch: 'deny' });
    const rows = await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } });
    const r = await fetchAsk(memberKey);
    expect(r.status, r.text).to.equal(200);
    const content = r.body.content as Block[];
    expect(content.map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_fetch_tool_result', 'text']);
    expect(content[1].content).to.deep.include({ type: 'web_fetch_tool_result_error', code: 'mcp_tool_disabled' });
    expect(r.body.usage.server_tool_use).to.deep.equal({ web_search_requests: 0, web_fetch_requests: 0 });
    expect(await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } }), 'nothing billed').to.equal(rows);
    expect((await alphaSearch(memberKey)).status, 'web_search is still allowed').to.equal(200);
    const orgFetch = await fetchAsk(o.key);
    expect((orgFetch.body.content as Block[])[1].content).to.deep.include({ type: 'web_fetch_result' });
    expect(await SearchUsage.count({ where: { orgId: o.org.id, kind: 'fetch' } })).to.equal(rows + 1);
  });
});
