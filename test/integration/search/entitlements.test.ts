import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { keys } from '../../../shared/redis/keys';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { Membership } from '../../../shared/db/models';
import { periodOf } from '../../../shared/search/period';
import { setMemberSearch, setOrgSearchKey, removeOrgSearchKey, setOverage } from '../../../shared/search/settings';
import { searchOrg, search, searches, ledger, expectSearchError } from './helpers';

const w = { get redis() { return env().redis; }, actor: { type: 'cli' as const, id: null, label: 'test' }, via: { method: 'CLI', path: 'test' } };
const classes = async (orgId: string) => (await ledger(orgId)).map((r) => `${r.chargeClass}:${Number(r.priceMicros)}`);

describe('web search entitlements (allowance, overage, monthly limit, members, abuse limit)', () => {
  beforeEach(resetSim);

  it('overage off: the allowance used exactly, the next platform-key search is quota_exceeded', async () => {
    const o = await searchOrg({ monthlyAllowance: 3 });
    expect(await searches(o.key, 3)).to.deep.equal([200, 200, 200]);
    const r = await search(o.key, { query: 'q' });
    expectSearchError(r, 429, 'quota_exceeded');
    expect(r.body.error.period_resets_at).to.match(/^\d{4}-\d{2}-01T00:00:00.000Z$/);
    expect(await classes(o.org.id)).to.deep.equal(['allowance:0', 'allowance:0', 'allowance:0']);
  });

  it('no allowance and no overage: quota_exceeded at once', async () => {
    const o = await searchOrg({ monthlyAllowance: 0 });
    expectSearchError(await search(o.key, { query: 'q' }), 429, 'quota_exceeded');
    expect(env().sim.log.entries).to.have.length(0);
  });

  it("the plan's allowance applies when the org sets none", async () => {
    const o = await searchOrg(undefined, { web_search_allowance: 2 });
    expect(await searches(o.key, 3)).to.deep.equal([200, 200, 429]);
  });

  it('overage on: past the allowance searches accrue as overage at the provider price, up to the monthly limit exactly', async () => {
    const o = await searchOrg({ monthlyAllowance: 2, overageEnabled: true, overageMonthlyLimit: 5 });
    expect(await searches(o.key, 5)).to.deep.equal([200, 200, 200, 200, 200]);
    expectSearchError(await search(o.key, { query: 'q' }), 429, 'quota_exceeded');
    expect(await classes(o.org.id)).to.deep.equal(['allowance:0', 'allowance:0', 'overage:5000', 'overage:5000', 'overage:5000']);
    const tav = await search(o.key, { query: 'q', provider: 'tavily' });
    expectSearchError(tav, 429, 'quota_exceeded');
  });

  it('overage switched off again: the next platform-key search past the allowance is quota_exceeded at once; own-key ones go on', async () => {
    const o = await searchOrg({ monthlyAllowance: 1, overageEnabled: true, overageMonthlyLimit: 10 });
    expect(await searches(o.key, 2)).to.deep.equal([200, 200]);
    await setOverage(o.org.id, { enabled: false }, w);
    expectSearchError(await search(o.key, { query: 'q' }), 429, 'quota_exceeded');
    await setOrgSearchKey(o.org.id, 'brave', 'own-key-0001', w);
    expect((await search(o.key, { query: 'q' })).body.usage.charge_class).to.equal('own_key');
    expect(await classes(o.org.id)).to.deep.equal(['allowance:0', 'overage:5000', 'own_key:0']);
  });

  it('own-key searches never touch the allowance and are never charged, but count toward the monthly limit', async () => {
    const o = await searchOrg({ monthlyAllowance: 1, overageEnabled: true, overageMonthlyLimit: 4 });
    await setOrgSearchKey(o.org.id, 'brave', 'own-key-0002', w);
    expect(await searches(o.key, 3)).to.deep.equal([200, 200, 200]);
    await removeOrgSearchKey(o.org.id, 'brave', w);
    const r = await search(o.key, { query: 'q' });
    expect(r.body.usage.charge_class, r.text).to.equal('allowance');
    expectSearchError(await search(o.key, { query: 'q' }), 429, 'quota_exceeded');
    expect(await classes(o.org.id)).to.deep.equal(['own_key:0', 'own_key:0', 'own_key:0', 'allowance:0']);
  });

  it('the monthly limit stops own-key searches too (with overage off)', async () => {
    const o = await searchOrg({ monthlyAllowance: 0, overageMonthlyLimit: 2 });
    await setOrgSearchKey(o.org.id, 'brave', 'own-key-0003', w);
    expect(await searches(o.key, 3)).to.deep.equal([200, 200, 429]);
  });

  it('a member cap below the org limit stops the member at the cap; the org goes on', async () => {
    const o = await searchOrg({ monthlyAllowance: 100, overageMonthlyLimit: 5 });
    const m = await o.member({ cap: 2 });
    expect(await searches(m.key, 3)).to.deep.equal([200, 200, 429]);
    expect(await searches(o.key, 3)).to.deep.equal([200, 200, 200]);
    expect(await searches(o.key, 1)).to.deep.equal([429]);
    const rows = await ledger(o.org.id);
    expect(rows.filter((r) => r.userId === m.userId)).to.have.length(2);
  });

  it('a member cap above the org limit: the org limit stops the member', async () => {
    const o = await searchOrg({ monthlyAllowance: 100, overageMonthlyLimit: 3 });
    const m = await o.member({ cap: 10 });
    expect(await searches(m.key, 4)).to.deep.equal([200, 200, 200, 429]);
  });

  it('an empty cap inherits the org limit', async () => {
    const o = await searchOrg({ monthlyAllowance: 100, overageMonthlyLimit: 2 });
    const m = await o.member({ cap: null });
    expect(await searches(m.key, 3)).to.deep.equal([200, 200, 429]);
  });

  it('a member switched off is refused; switched on again, searches go on; a raised cap takes effect at once', async () => {
    const o = await searchOrg({ monthlyAllowance: 100 });
    const m = await o.member({ enabled: false, cap: 1 });
    expectSearchError(await search(m.key, { query: 'q' }), 429, 'quota_exceeded');
    await setMemberSearch(o.org.id, m.userId, { enabled: true }, w);
    expect(await searches(m.key, 2)).to.deep.equal([200, 429]);
    await setMemberSearch(o.org.id, m.userId, { cap: 2 }, w);
    expect(await searches(m.key, 2)).to.deep.equal([200, 429]);
  });

  it('a member key whose user has left the org is refused (at authentication: the key no longer works at all)', async () => {
    const o = await searchOrg({ monthlyAllowance: 100 });
    const m = await o.member();
    expect(await searches(m.key, 1)).to.deep.equal([200]);
    await Membership.destroy({ where: { orgId: o.org.id, userId: m.userId } });
    await bumpEpoch(env().redis);
    expectSearchError(await search(m.key, { query: 'q' }), 401, 'INVALID_API_KEY');
    expect(await ledger(o.org.id)).to.have.length(1);
  });

  it('50 concurrent searches against 10 remaining: exactly 10 succeed and 10 ledger rows exist', async () => {
    const o = await searchOrg({ monthlyAllowance: 12 });
    await o.org.update({ laneOverrides: { 'search:default': 64 } });
    await bumpEpoch(env().redis);
    expect(await searches(o.key, 2)).to.deep.equal([200, 200]);
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => search(o.key, { query: `q${i}` })));
    const ok = all.filter((r) => r.status === 200);
    expect(ok, JSON.stringify(all.filter((r) => r.status !== 200 && r.status !== 429).map((r) => r.text))).to.have.length(10);
    expect(all.filter((r) => r.status === 429).every((r) => r.body.error.code === 'quota_exceeded')).to.equal(true);
    expect(await ledger(o.org.id)).to.have.length(12);
  });

  it('50 concurrent first searches of a new org (counters seeded from the ledger under the race) against an allowance of 10: exactly 10', async () => {
    const o = await searchOrg({ monthlyAllowance: 10 });
    await o.org.update({ laneOverrides: { 'search:default': 64 } });
    await bumpEpoch(env().redis);
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => search(o.key, { query: `c${i}` })));
    expect(all.filter((r) => r.status === 200)).to.have.length(10);
    expect(all.filter((r) => r.status === 429)).to.have.length(40);
    expect(await ledger(o.org.id)).to.have.length(10);
  });

  it('counters lost from Redis are rebuilt from the ledger (the allowance is not handed out twice)', async () => {
    const o = await searchOrg({ monthlyAllowance: 2 });
    expect(await searches(o.key, 2)).to.deep.equal([200, 200]);
    for (const which of ['all', 'platform']) await env().redis.del(keys.searchCount(o.org.id, periodOf(), which));
    expectSearchError(await search(o.key, { query: 'q' }), 429, 'quota_exceeded');
  });

  it('a failed search gives its reservation back and is not charged', async () => {
    const o = await searchOrg({ monthlyAllowance: 1 });
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'search:brave', status: 500, statusTimes: 1 }) });
    expectSearchError(await search(o.key, { query: 'q' }), 502, 'search_provider_error');
    expect(await ledger(o.org.id)).to.have.length(0);
    expect(await searches(o.key, 2)).to.deep.equal([200, 429]);
  });

  it('the abuse limit (searches per minute, own-key included) answers 429 search_rate_limited with Retry-After', async () => {
    const o = await searchOrg({ monthlyAllowance: 100 }, { web_search_per_minute: 2 });
    await setOrgSearchKey(o.org.id, 'brave', 'own-key-0004', w);
    expect(await searches(o.key, 2)).to.deep.equal([200, 200]);
    const r = await search(o.key, { query: 'q' });
    expectSearchError(r, 429, 'search_rate_limited');
    expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
  });
});
