import net from 'net';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { ApiError } from '../../../shared/errors/ApiError';
import { runSearch, type SearchCaller } from '../../../api/dispatch/search';
import { searchOrg, ledger, searches } from './helpers';

async function caller(o: Awaited<ReturnType<typeof searchOrg>>, requestId: string): Promise<SearchCaller> {
  const ctx = env().gw.ctx;
  await ctx.directory.sync();
  return { ctx, orgId: o.org.id, org: (await ctx.directory.org(o.org.id))!, apiKeyId: o.keyId, userId: null, projectId: null, requestId };
}

describe('runSearch: the function native interception calls', () => {
  beforeEach(resetSim);

  it('a search outcome carries the result and its charge; the ledger row uses the given request id', async () => {
    const o = await searchOrg({ monthlyAllowance: 5 });
    const out = await runSearch(await caller(o, `native-${o.org.id}-1`), { kind: 'search', query: 'q', count: 2 });
    expect(out.kind).to.equal('search');
    if (out.kind !== 'search') return;
    expect(out.results).to.have.length(2);
    expect(out.charge).to.deep.equal({ provider: 'brave', keySource: 'platform', chargeClass: 'allowance', priceMicros: 0 });
    expect((await ledger(o.org.id)).map((r) => r.requestId)).to.deep.equal([`native-${o.org.id}-1`]);
  });

  it('kind fetch passes the same gate; a page that cannot be fetched (its host drops every connection) answers fetch_failed, and nothing is charged or counted', async () => {
    const o = await searchOrg({ monthlyAllowance: 1 });
    // A local host (127.0.0.2, trusted by the test env's IMAGE_FETCH_ALLOW_CIDRS) that accepts and drops
    // each connection: the fetch fails the same way on a machine with or without a route to the internet.
    const dropped: net.Socket[] = [];
    const host = net.createServer((s) => (dropped.push(s), s.destroy()));
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.2', resolve));
    try {
      const port = (host.address() as net.AddressInfo).port;
      await runSearch(await caller(o, `native-${o.org.id}-2`), { kind: 'fetch', url: `https://127.0.0.2:${port}/` });
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(ApiError);
      expect((err as ApiError).code, (err as Error).message).to.equal('fetch_failed');
    } finally {
      await new Promise<void>((resolve) => host.close(() => resolve()));
    }
    expect(dropped, 'the fetch reached the local host').to.have.length.above(0);
    expect(await ledger(o.org.id)).to.have.length(0);
    expect(await searches(o.key, 2)).to.deep.equal([200, 429]);
  });

  it('an aborted signal cancels the search and gives the reservation back', async () => {
    const o = await searchOrg({ monthlyAllowance: 1 });
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'search:brave', delayMs: 2000 }) });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    const err = await runSearch(await caller(o, `native-${o.org.id}-3`), { kind: 'search', query: 'slow' }, ac.signal).catch((e: unknown) => e);
    expect(Date.now() - started).to.be.below(1500);
    expect(err).to.be.instanceOf(Error);
    resetSim();
    expect(await searches(o.key, 2)).to.deep.equal([200, 429]);
  });
});
