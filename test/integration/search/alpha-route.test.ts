import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { searchOrg, search, ledger, expectSearchError } from './helpers';

describe('POST /v1/alpha/search', () => {
  beforeEach(resetSim);

  it('answers the spec result shape from the platform default provider (brave), and writes one ledger row and one usage event', async () => {
    const o = await searchOrg();
    const r = await search(o.key, { query: 'rust async', count: 3 });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.query).to.equal('rust async');
    expect(r.body.provider).to.equal('brave');
    expect(r.body.results).to.have.length(3);
    for (const x of r.body.results) {
      expect(x).to.include.keys('title', 'url', 'snippet', 'score');
      expect(x.snippet).not.to.match(/<strong>/);
      if (x.published_date !== undefined) expect(x.published_date).to.match(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(r.body.results[0].published_date).to.equal('2025-01-15');
    expect(r.body.results[1]).not.to.have.property('published_date');
    expect(r.body.usage).to.deep.equal({ key_source: 'platform', charge_class: 'allowance', price_micros: 0 });
    const sent = env().sim.log.entries.find((e) => e.path === '/brave/res/v1/web/search')!;
    expect(sent.subscriptionToken).to.equal('sim-brave-platform-key');
    expect(sent.query).to.deep.include({ q: 'rust async', count: '3' });
    const rows = await ledger(o.org.id);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({ provider: 'brave', kind: 'search', keySource: 'platform', chargeClass: 'allowance', userId: null, apiKeyId: o.keyId });
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id, modality: 'web_search' } })).to.equal(1);
  });

  it('an empty result list is an answer, and is charged like any search', async () => {
    const o = await searchOrg();
    await call('POST', '/_sim/knobs', { base: env().simUrl, json: { model: 'search:brave', searchResults: 0 } });
    const r = await search(o.key, { query: 'nothing here' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.results).to.deep.equal([]);
    expect(await ledger(o.org.id)).to.have.length(1);
  });

  it('refuses a bad body with 400 invalid_request (query 1-400 characters) and charges nothing', async () => {
    const o = await searchOrg();
    expectSearchError(await search(o.key, { query: '' }), 400, 'invalid_request');
    expectSearchError(await search(o.key, { query: 'x'.repeat(401) }), 400, 'invalid_request');
    expectSearchError(await search(o.key, { query: 'q', count: 2.5 }), 400, 'invalid_request');
    expectSearchError(await search(o.key, { query: 'q', extra: 1 }), 400, 'invalid_request');
    expect((await search(o.key, { query: 'x'.repeat(400), count: 1 })).status).to.equal(200);
    expect(await ledger(o.org.id)).to.have.length(1);
  });

  it("counts the query in characters as the MCP schema's maxLength does (code points): 400 emoji fit, 401 do not", async () => {
    const o = await searchOrg();
    expectSearchError(await search(o.key, { query: '😀'.repeat(401), count: 1 }), 400, 'invalid_request');
    expect(await ledger(o.org.id), 'nothing charged for the refused query').to.have.length(0);
    const r = await search(o.key, { query: '😀'.repeat(400), count: 1 });
    expect(r.status, r.text).to.equal(200);
    expect(await ledger(o.org.id)).to.have.length(1);
  });

  it('needs an inference key', async () => {
    const r = await call('POST', '/v1/alpha/search', { json: { query: 'q' } });
    expect(r.status).to.equal(401);
    expectErrorEnvelope(r.text, 'INVALID_API_KEY');
    const g = await call('GET', '/v1/alpha/search', { headers: keyHeader((await searchOrg()).key) });
    expect(g.status).to.equal(405);
  });
});
