import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { SearchProvider, SearchSetting, SearchUsage, UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
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

  it('a malformed server-tool declaration is a 400 on both dialects (invalid_request, or on responses OpenAI\'s code where it has one): nothing searched, upstream never called, nothing billed', async () => {
    await useProvider('brave');
    const search = (extra: Record<string, unknown>) => ({ type: 'web_search_20250305', name: 'web_search', ...extra });
    const messages: Array<Record<string, unknown>> = [
      search({ user_location: { type: 'approximate', country: 'Germany' } }),
      search({ user_location: { country: 'DE' } }),
      search({ user_location: { type: 'exact', country: 'DE' } }),
      search({ user_location: 'DE' }),
      search({ user_location: { type: 'approximate', city: '' } }),
      search({ max_uses: 0 }),
      search({ max_uses: 1.5 }),
      search({ allowed_domains: 'example.com' }),
      search({ allowed_domains: ['a.example'], blocked_domains: ['b.example'] }),
      { type: 'web_fetch_20250910', name: 'web_fetch', max_content_tokens: -1 },
      { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 'two' },
    ];
    // the Responses dialect in OpenAI's codes where its API has them (responses-openai-refusals.test.ts)
    const responses: Array<[Record<string, unknown>, string]> = [
      [{ type: 'web_search', user_location: { type: 'approximate', country: 'JPN' } }, 'invalid_request'],
      [{ type: 'web_search_preview', user_location: { country: 'JP' } }, 'missing_required_parameter'],
      [{ type: 'web_search', filters: { allowed_domains: [1] } }, 'invalid_type'],
      [{ type: 'web_search', search_context_size: 'huge' }, 'invalid_value'],
    ];
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const searchesBefore = await SearchUsage.count({ where: { orgId: o.org.id } });
    for (const tool of messages) {
      const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-chat', max_tokens: 300, tools: [tool], messages: [{ role: 'user', content: 'search for honey bees' }] } });
      expect(r.status, `${JSON.stringify(tool)} -> ${r.text}`).to.equal(400);
      expect(r.body.error, JSON.stringify(tool)).to.include({ type: 'invalid_request_error', code: 'invalid_request' });
      expect(r.text).not.to.match(/at .*\.js:\d+/);
    }
    for (const [tool, code] of responses) {
      const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-chat', input: 'search for honey bees', tools: [tool], store: false } });
      expect(r.status, `${JSON.stringify(tool)} -> ${r.text}`).to.equal(400);
      expect(r.body.error, JSON.stringify(tool)).to.include({ code });
    }
    expect(env().sim.log.entries.map((e) => e.path), 'neither the model nor a search provider was called').to.deep.equal([]);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
    expect(await SearchUsage.count({ where: { orgId: o.org.id } })).to.equal(searchesBefore);

    // the well-formed spellings still pass: null fields, a lowercase country, a region and timezone
    const ok = await call('POST', '/v1/messages', {
      headers: { ...keyHeader(o.key), ...V },
      json: { model: 'sim-chat', max_tokens: 300, tools: [search({ max_uses: 2, blocked_domains: null, user_location: { type: 'approximate', country: 'de', region: 'Berlin', city: null, timezone: 'Europe/Berlin' } })], messages: [{ role: 'user', content: 'search for honey bees' }] },
    });
    expect(ok.status, ok.text).to.equal(200);
  });
});
