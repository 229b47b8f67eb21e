import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { call } from '../../helpers/http';
import { setOrgSearchKey } from '../../../shared/search/settings';
import { searchOrg, search, ledger, expectSearchError, testProvider } from './helpers';

const w = { get redis() { return env().redis; }, actor: { type: 'cli' as const, id: null, label: 'test' }, via: { method: 'CLI', path: 'test' } };
const knobs = (provider: string, k: Record<string, unknown>) => call('POST', '/_sim/knobs', { base: env().simUrl, json: { model: `search:${provider}`, ...k } });

describe('web search providers: wire formats, count clamps and error mapping', () => {
  beforeEach(resetSim);

  it('brave: GET with X-Subscription-Token, count clamped to 1-20, dates from page_age, scores from rank', async () => {
    const o = await searchOrg();
    const r = await search(o.key, { query: 'q', provider: 'brave', count: 50 });
    expect(r.body.results).to.have.length(20);
    expect(env().sim.log.entries[0].query.count).to.equal('20');
    expect(r.body.results[0].score).to.be.greaterThan(r.body.results[1].score);
    await search(o.key, { query: 'q', provider: 'brave', count: 0 });
    expect(env().sim.log.entries[1].query.count).to.equal('1');
  });

  it('tavily: POST /search, max_results clamped to 1-20, dates from published_date (an HTTP date), its own scores', async () => {
    const o = await searchOrg();
    const r = await search(o.key, { query: 'q', provider: 'tavily', count: 99 });
    expect(r.status, r.text).to.equal(200);
    expect((env().sim.log.entries[0].body as { max_results: number }).max_results).to.equal(20);
    expect(r.body.results[0]).to.deep.include({ published_date: '2025-01-15', score: 0.99 });
  });

  it('exa: POST /search with x-api-key, numResults clamped to 1-100, a null title becomes an empty string', async () => {
    const o = await searchOrg();
    const r = await search(o.key, { query: 'q', provider: 'exa', count: 500 });
    expect(r.status, r.text).to.equal(200);
    expect((env().sim.log.entries[0].body as { numResults: number }).numResults).to.equal(100);
    expect(r.body.results).to.have.length(100);
    expect(r.body.results[1].title).to.equal('');
    expect(r.body.results[0].published_date).to.equal('2025-01-15');
    const d = await search(o.key, { query: 'q', provider: 'exa' });
    expect((env().sim.log.entries[1].body as { numResults: number }).numResults).to.equal(10);
    expect(d.body.results).to.have.length(10);
  });

  for (const provider of ['brave', 'tavily', 'exa']) {
    it(`${provider}: upstream 429 (Retry-After too long to retry) is 429 search_provider_rate_limited with Retry-After, nothing charged`, async () => {
      const o = await searchOrg();
      await knobs(provider, { status: 429, retryAfter: 7 });
      const r = await search(o.key, { query: 'q', provider });
      expectSearchError(r, 429, 'search_provider_rate_limited');
      expect(r.headers.get('retry-after')).to.equal('7');
      expect(await ledger(o.org.id)).to.have.length(0);
    });

    it(`${provider}: upstream 500 is 502 search_provider_error; 503 is 503 search_provider_unavailable; a malformed body is 502`, async () => {
      const o = await searchOrg();
      await knobs(provider, { status: 500 });
      expectSearchError(await search(o.key, { query: 'q', provider }), 502, 'search_provider_error');
      await knobs(provider, { status: 503, retryAfter: 9 });
      expectSearchError(await search(o.key, { query: 'q', provider }), 503, 'search_provider_unavailable');
      await knobs(provider, { malformed: true });
      expectSearchError(await search(o.key, { query: 'q', provider }), 502, 'search_provider_error');
      expect(await ledger(o.org.id)).to.have.length(0);
    });

    it(`${provider}: a refused key never appears in the answer (platform key: 502; org's own key: 400)`, async () => {
      const p = await testProvider(provider as 'brave', { platformKey: 'invalid-platform-secret-xyz' });
      const o = await searchOrg();
      const r = await search(o.key, { query: 'q', provider: p.name });
      expectSearchError(r, 502, 'search_provider_auth_failed');
      expect(r.text).not.to.contain('invalid-platform-secret-xyz');
      await setOrgSearchKey(o.org.id, p.name, 'invalid-own-secret-abc', w);
      const own = await search(o.key, { query: 'q', provider: p.name });
      expectSearchError(own, 400, 'search_provider_auth_failed');
      expect(own.text).not.to.contain('invalid-own-secret-abc');
      expect(await ledger(o.org.id)).to.have.length(0);
    });
  }
});
