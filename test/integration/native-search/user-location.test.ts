import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { SearchProvider, SearchSetting } from '../../../shared/db/models';
import { encrypt } from '../../../shared/crypto';
import { bumpEpoch } from '../../../shared/cache/epoch';

type Block = Record<string, unknown> & { type: string };
const V = { 'anthropic-version': '2023-06-01' };
const LOCATION = { type: 'approximate', city: 'Berlin', country: 'de', timezone: 'Europe/Berlin' };

/**
 * A web search tool's `user_location` reaches each provider whose API takes a country, in that
 * provider's form: Brave `country=DE`, Tavily `country: "germany"`, Exa `userLocation: "DE"`
 * (checked in the simulator's request log).
 */
describe('native web search: user_location goes to the provider', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    for (const kind of ['brave', 'tavily', 'exa']) {
      const name = `h16-loc-${kind}`;
      await SearchProvider.findOrCreate({ where: { name }, defaults: { name, kind, baseUrl: `${env().simUrl}/${kind}`, apiKeyEncrypted: encrypt('sim-search-key'), enabled: true } });
      await SearchProvider.update({ baseUrl: `${env().simUrl}/${kind}`, enabled: true }, { where: { name } });
    }
    await SearchSetting.findOrCreate({ where: { orgId: o.org.id }, defaults: { orgId: o.org.id, defaultProvider: 'h16-loc-brave' } });
    await SearchSetting.update({ monthlyAllowance: 100 }, { where: { orgId: o.org.id } });
  });

  const useProvider = async (kind: string) => {
    await SearchSetting.update({ defaultProvider: `h16-loc-${kind}` }, { where: { orgId: o.org.id } });
    await bumpEpoch(env().redis);
  };
  const searchRequest = (kind: string) => env().sim.log.entries.filter((e) => e.path.startsWith(`/${kind}/`));

  const cases: Array<[string, (e: ReturnType<typeof searchRequest>[number]) => unknown, unknown]> = [
    ['brave', (e) => e.query.country, 'DE'],
    ['tavily', (e) => (e.body as Record<string, unknown>).country, 'germany'],
    ['exa', (e) => (e.body as Record<string, unknown>).userLocation, 'DE'],
  ];
  for (const [kind, sent, expected] of cases) {
    it(`messages: ${kind} gets the country; without user_location none is sent`, async () => {
      await useProvider(kind);
      const ask = (tool: Record<string, unknown>) =>
        call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-chat', max_tokens: 300, tools: [{ type: 'web_search_20250305', name: 'web_search', ...tool }], messages: [{ role: 'user', content: 'search for honey bees' }] } });
      const r = await ask({ user_location: LOCATION });
      expect(r.status, r.text).to.equal(200);
      expect((r.body.content as Block[]).map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);
      expect(Array.isArray((r.body.content as Block[])[1].content), JSON.stringify(r.body.content)).to.equal(true);
      expect(searchRequest(kind)).to.have.length(1);
      expect(sent(searchRequest(kind)[0])).to.equal(expected);

      resetSim();
      expect((await ask({})).status).to.equal(200);
      expect(searchRequest(kind)).to.have.length(1);
      expect(sent(searchRequest(kind)[0])).to.equal(undefined);
    });
  }

  it('responses: the web_search tool user_location country reaches the provider', async () => {
    await useProvider('brave');
    const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search', user_location: { type: 'approximate', country: 'JP' } }], store: false } });
    expect(r.status, r.text).to.equal(200);
    expect(searchRequest('brave').map((e) => e.query.country)).to.deep.equal(['JP']);
  });
});
