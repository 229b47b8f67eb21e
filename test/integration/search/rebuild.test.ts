import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { keys } from '../../../shared/redis/keys';
import { periodOf } from '../../../shared/search/period';
import { usagePool } from '../../../shared/metering/usage';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { waitFor } from '../../helpers/wait';
import { searchOrg, search, searches, ledger, expectSearchError } from './helpers';

const reservations = async (orgId: string) => Number((await usagePool().query('SELECT count(*) AS n FROM search_reservations WHERE org_id = $1', [orgId])).rows[0].n);

/**
 * The period counters vanish while searches are in flight (a failover to a lagging replica): they
 * are rebuilt from the ledger plus the searches reserved and not yet settled, so the searches in
 * flight are not handed out a second time.
 */
describe('web search counters rebuilt while searches are in flight', () => {
  let up: SearchUpstream;
  beforeEach(resetSim);
  before(async () => {
    // 'held' searches answer after 3 s: long enough to lose the counters while they are in flight
    up = await startSearchUpstream((q) => (q.startsWith('held') ? 3000 : 0));
  });
  after(() => up.close());

  it('allowance 6, one settled and three in flight (two of a member capped at 3): after the counters go, the member gets one more and the org one more', async () => {
    const o = await searchOrg();
    await useSearchProvider(o.org.id, up, 'n27-rebuild', { monthlyAllowance: 6 });
    const m = await o.member({ cap: 3 });
    expect(await searches(o.key, 1)).to.deep.equal([200]);
    const inFlight = [search(m.key, { query: 'held 1' }), search(m.key, { query: 'held 2' }), search(o.key, { query: 'held 3' })];
    expect(await waitFor(() => up.queries.filter((q) => q.startsWith('held')).length === 3, 5000), 'the three searches reached the provider').to.equal(true);
    expect(await reservations(o.org.id), 'reserved, not settled').to.equal(3);

    const period = periodOf();
    for (const which of ['all', 'platform', `member:${m.userId}`]) expect(await env().redis.del(keys.searchCount(o.org.id, period, which)), which).to.equal(1);

    // rebuilt: all 1 + 3, platform 1 + 3, the member's 0 + 2
    expect(await searches(m.key, 1)).to.deep.equal([200]);
    const capped = await search(m.key, { query: 'q' });
    expectSearchError(capped, 429, 'quota_exceeded');
    expect(capped.body.error.message).to.match(/personal monthly search cap/);
    expect(await searches(o.key, 1)).to.deep.equal([200]);
    const spent = await search(o.key, { query: 'q' });
    expectSearchError(spent, 429, 'quota_exceeded');
    expect(spent.body.error.message).to.match(/allowance is used up/);

    expect((await Promise.all(inFlight)).map((r) => r.status)).to.deep.equal([200, 200, 200]);
    expect(await ledger(o.org.id), 'exactly the allowance').to.have.length(6);
    expect(await reservations(o.org.id), 'settled: no reservation left').to.equal(0);
    expect(await searches(o.key, 1)).to.deep.equal([429]);
  });

  it('a search that fails gives its reservation back (nothing held, nothing billed)', async () => {
    const o = await searchOrg({ monthlyAllowance: 2 });
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'search:brave', status: 500, statusTimes: 1 }) });
    expectSearchError(await search(o.key, { query: 'q' }), 502, 'search_provider_error');
    expect(await reservations(o.org.id)).to.equal(0);
    for (const which of ['all', 'platform']) await env().redis.del(keys.searchCount(o.org.id, periodOf(), which));
    expect(await searches(o.key, 3)).to.deep.equal([200, 200, 429]);
    expect(await ledger(o.org.id)).to.have.length(2);
  });
});
