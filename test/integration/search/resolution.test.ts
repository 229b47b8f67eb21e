import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { SearchProvider, SearchSetting } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { setOrgSearchKey, removeOrgSearchKey } from '../../../shared/search/settings';
import { searchOrg, search, ledger, expectSearchError, testProvider } from './helpers';

const cli = { get redis() { return env().redis; }, actor: { type: 'cli' as const, id: null, label: 'test' }, via: { method: 'CLI', path: 'search-keys set' } };

describe('web search: provider and key resolution', () => {
  beforeEach(resetSim);

  it('an explicit known, enabled provider is used as named (tavily: POST /search with a Bearer key)', async () => {
    const o = await searchOrg();
    const r = await search(o.key, { query: 'q', provider: 'tavily', count: 2 });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.provider).to.equal('tavily');
    expect(r.body.results).to.have.length(2);
    const sent = env().sim.log.entries.find((e) => e.path === '/tavily/search')!;
    expect(sent.authorization).to.equal('Bearer sim-tavily-platform-key');
    expect(sent.body).to.deep.include({ query: 'q', max_results: 2 });
  });

  it('an explicit unknown, disabled, or not-allowed provider is provider_not_allowed, never swapped', async () => {
    const off = await testProvider('exa', { enabled: false });
    const other = await testProvider('exa');
    const o = await searchOrg({ allowedProviders: ['brave', off.name] });
    expectSearchError(await search(o.key, { query: 'q', provider: 'nope' }), 400, 'provider_not_allowed');
    expectSearchError(await search(o.key, { query: 'q', provider: off.name }), 400, 'provider_not_allowed');
    expectSearchError(await search(o.key, { query: 'q', provider: other.name }), 400, 'provider_not_allowed');
    expect(env().sim.log.entries).to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(0);
  });

  it("without a provider the org's default is used; disabled since, it is provider_unconfigured rather than a switch", async () => {
    const p = await testProvider('exa');
    const o = await searchOrg({ defaultProvider: p.name });
    const ok = await search(o.key, { query: 'q' });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.provider).to.equal(p.name);
    expect(env().sim.log.entries[0].xApiKey).to.equal('sim-exa-platform-key');
    await p.update({ enabled: false });
    await bumpEpoch(env().redis);
    resetSim();
    expectSearchError(await search(o.key, { query: 'q' }), 409, 'provider_unconfigured');
    expect(env().sim.log.entries).to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(1);
  });

  it('without a provider or org default, the platform default (is_default) is used', async () => {
    const o = await searchOrg({ defaultProvider: null });
    const r = await search(o.key, { query: 'q' });
    expect(r.body.provider).to.equal((await SearchProvider.findOne({ where: { isDefault: true } }))!.name);
  });

  it("the org's own key comes first: used upstream, never charged, ledger says own/own_key; removed, the platform key is back", async () => {
    const o = await searchOrg({ monthlyAllowance: 0 });
    await setOrgSearchKey(o.org.id, 'brave', 'org-own-brave-key-1234', cli);
    const r = await search(o.key, { query: 'q' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.usage).to.deep.equal({ key_source: 'own', charge_class: 'own_key', price_micros: 0 });
    expect(env().sim.log.entries[0].subscriptionToken).to.equal('org-own-brave-key-1234');
    await removeOrgSearchKey(o.org.id, 'brave', cli);
    // no allowance and overage off: the platform key may not be used
    expectSearchError(await search(o.key, { query: 'q' }), 429, 'quota_exceeded');
    const rows = await ledger(o.org.id);
    expect(rows.map((x) => [x.keySource, x.chargeClass, Number(x.priceMicros)])).to.deep.equal([['own', 'own_key', 0]]);
  });

  it('no own key and no platform key: provider_unconfigured', async () => {
    const p = await testProvider('brave', { platformKey: null });
    const o = await searchOrg();
    expectSearchError(await search(o.key, { query: 'q', provider: p.name }), 409, 'provider_unconfigured');
    await setOrgSearchKey(o.org.id, p.name, 'own-key-abcd', cli);
    const r = await search(o.key, { query: 'q', provider: p.name });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.usage.key_source).to.equal('own');
  });

  it('a change of the default provider takes effect on the next search (the writer bumps the cache epoch)', async () => {
    const o = await searchOrg({ defaultProvider: 'tavily' });
    expect((await search(o.key, { query: 'q' })).body.provider).to.equal('tavily');
    await SearchSetting.update({ defaultProvider: 'exa' }, { where: { orgId: o.org.id } });
    await bumpEpoch(env().redis);
    expect((await search(o.key, { query: 'q' })).body.provider).to.equal('exa');
  });
});
