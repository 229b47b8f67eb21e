import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { Model, UsageEvent } from '../../../shared/db/models';
import { bodyOfSize, expectRejected, post } from './helpers';
import { usageSettled } from '../../helpers/usage';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { orgUsageBetween } from '../../../shared/billing/usage-figures';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';

const DOCS = [
  'Carson City is the capital city of the American state of Nevada.',
  'Paris is the capital and largest city of France.',
  'Capital punishment has existed in the United States since before it was a country.',
  'Bananas are rich in potassium.',
];

describe('POST /v1/rerank (Cohere v2 envelope)', () => {
  let o: TestOrg;
  const rerank = (json: unknown, path = '/v1/rerank') => post(o.key, path, json);
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);

  it('ranks by lexical relevance, sorted by score; id is the request id; one usage event in search units', async () => {
    const r = await rerank({ model: 'sim-rerank', query: 'What is the capital of France?', documents: DOCS });
    expect(r.status, r.text).to.equal(200);
    const id = r.headers.get('x-service-request-id');
    expect(r.body.id).to.equal(id);
    const results: Array<{ index: number; relevance_score: number; document?: unknown }> = r.body.results;
    expect(results).to.have.length(4);
    expect(results[0].index).to.equal(1);
    expect(results.at(-1)!.index).to.equal(3); // shares no word with the query
    expect(results.at(-1)!.relevance_score).to.equal(0);
    for (let i = 1; i < results.length; i++) expect(results[i - 1].relevance_score).to.be.at.least(results[i].relevance_score);
    for (const x of results) expect(x.relevance_score).to.be.within(0, 1);
    expect(results[0]).not.to.have.property('document');
    expect(r.body.meta.billed_units).to.deep.equal({ search_units: 1 });
    expect(env().sim.log.entries.map((e) => [e.path, e.model])).to.deep.equal([['/v2/rerank', 'sim-rerank-1']]);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId: id! } });
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ orgId: o.org.id, model: 'sim-rerank', modality: 'rerank', inputTokens: 0 });
    expect(events[0].units, 'priced at the catalog\'s search_unit price (1,000 µ$)').to.deep.equal({ search_units: 1, cost_micros: 1000 });
  });

  it('applies top_n, echoes documents when asked, accepts and ignores the chunking fields', async () => {
    const r = await rerank({
      model: 'sim-rerank', query: 'capital city', documents: DOCS, top_n: 2, return_documents: true,
      max_tokens_per_doc: 4, rank_fields: ['text'], max_chunks_per_doc: 1, priority: 999,
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.results).to.have.length(2);
    for (const x of r.body.results) expect(x.document).to.deep.equal({ text: DOCS[x.index] }); // whole text: nothing truncated
    const all = await rerank({ model: 'sim-rerank', query: 'capital', documents: DOCS, top_n: 50, return_documents: false });
    expect(all.status, all.text).to.equal(200);
    expect(all.body.results).to.have.length(4);
  });

  it('bills one search unit per 100 documents', async () => {
    const docs = Array.from({ length: 250 }, (_, i) => `document number ${i} about topic ${i % 7}`);
    const r = await rerank({ model: 'sim-rerank', query: 'topic 3', documents: docs, top_n: 5 });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.meta.billed_units.search_units).to.equal(3);
    await usageSettled();
    const ev = await UsageEvent.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev!.units).to.deep.equal({ search_units: 3, cost_micros: 3000 });
  });

  // Cohere's "Best Practices for using Rerank": Number of Documents, maximum 10,000 (1,000 is its
  // advice for latency); a model that declares no limit takes what Cohere takes
  it("a model without declared limits takes Cohere's 10,000 documents, not 1,000", async () => {
    await upsertModel({ id: 'sim-rerank-undeclared', provider: 'simulator-cohere', upstream: 'sim-rerank-1', capabilities: { rerank: true }, context_window: 512 });
    await bumpEpoch(env().redis);
    try {
      const docs = Array.from({ length: 1500 }, (_, i) => `doc ${i} topic ${i % 7}`);
      const r = await rerank({ model: 'sim-rerank-undeclared', query: 'topic 3', documents: docs, top_n: 3 }, '/v2/rerank');
      expect(r.status, r.text).to.equal(200);
      expect(r.body.meta.billed_units.search_units).to.equal(15);
      const listed = await call('GET', '/v1/rerank/models', { headers: keyHeader(o.key) });
      expect(listed.body.data.find((m: { id: string }) => m.id === 'sim-rerank-undeclared').limits).to.include({ max_documents: 10_000, max_input_tokens: 512 });
      const over = await rerank({ model: 'sim-rerank-undeclared', query: 'q', documents: Array.from({ length: 10_001 }, () => 'd') });
      await expectRejected(over, 400, 'batch_too_large');
    } finally {
      await Model.destroy({ where: { publicId: 'sim-rerank-undeclared' } }); // the rerank listing's tests see the seeded catalog only
      await bumpEpoch(env().redis);
    }
  });

  it('is charged: the ledger, the usage figures and a key budget count its search units at their price; what does not fit is 402', async () => {
    const p = await buildOrg(env().redis);
    await updateKeyControls(env().redis, p.keyId, { budgetMicros: 2_500, budgetPeriod: 'day' }); // two searches of 1,000 µ$ fit, a third does not
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await post(p.key, '/v2/rerank', { model: 'sim-rerank', query: 'capital', documents: DOCS }));
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 402]);
    expect(answers[2].body.error.code ?? answers[2].body.message, answers[2].text).to.match(/budget_exceeded|budget/);
    await usageSettled();
    expect(await ledgerSpend('key', p.keyId, null), 'ledger').to.equal(2_000);
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const figures = await orgUsageBetween(p.org.id, today, tomorrow);
    expect(figures.rows.filter((r) => r.modality === 'rerank').reduce((s, r) => s + r.costMicros, 0), 'usage figures').to.equal(2_000);
  });

  it('sorts, applies top_n and counts search units itself when the upstream does none of it', async () => {
    env().sim.knobs.set('sim-rerank-1', { bareRerank: true });
    const docs = Array.from({ length: 201 }, (_, i) => (i % 50 === 7 ? `topic ${i} topic topic` : `document number ${i} about topic ${i % 7}`));
    const r = await rerank({ model: 'sim-rerank', query: 'topic', documents: docs, top_n: 5 });
    expect(r.status, r.text).to.equal(200);
    // the upstream answered all 201 in document order, without billed units
    expect(env().sim.log.entries).to.have.length(1);
    const results: Array<{ index: number; relevance_score: number }> = r.body.results;
    expect(results).to.have.length(5);
    for (let i = 1; i < results.length; i++) expect(results[i - 1].relevance_score).to.be.at.least(results[i].relevance_score);
    expect(results.slice(0, 4).map((x) => x.index).sort((a, b) => a - b), 'the four documents that say topic three times').to.deep.equal([7, 57, 107, 157]);
    expect(r.body.meta.billed_units).to.deep.equal({ search_units: 3 }); // 201 documents: ceil(201 / 100)
    await usageSettled();
    const ev = await UsageEvent.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev!.units).to.deep.equal({ search_units: 3, cost_micros: 3000 });

    const one = await rerank({ model: 'sim-rerank', query: 'topic', documents: docs.slice(0, 100) });
    expect(one.status, one.text).to.equal(200);
    expect(one.body.results).to.have.length(100);
    expect(one.body.meta.billed_units).to.deep.equal({ search_units: 1 }); // exactly 100: one unit
  });

  it('a top_n past the document count returns every result, and the upstream is asked for no more than the documents', async () => {
    // JSON.stringify writes 1e21 as 1e+21, which an integer field of a strict server cannot read; 3e9 overflows an int32
    for (const topN of [5, 3_000_000_000, 1e21, Number.MAX_SAFE_INTEGER]) {
      for (const path of ['/v1/rerank', '/v2/rerank']) {
        resetSim();
        const r = await rerank({ model: 'sim-rerank', query: 'capital city', documents: DOCS, top_n: topN }, path);
        expect(r.status, r.text).to.equal(200);
        expect(r.body.results, `${path} top_n ${topN}`).to.have.length(DOCS.length);
        const sent = env().sim.log.entries.map((e) => (e.body as { top_n?: unknown }).top_n);
        expect(sent, `${path} top_n ${topN}: what the upstream was asked`).to.deep.equal([DOCS.length]);
      }
    }
    const two = await rerank({ model: 'sim-rerank', query: 'capital city', documents: DOCS, top_n: 2 });
    expect(two.body.results).to.have.length(2);
    expect((env().sim.log.entries.at(-1)!.body as { top_n?: unknown }).top_n, 'a top_n within the count is sent as asked').to.equal(2);
  });

  it("serves Cohere's own path /v2/rerank too, and unicode text", async () => {
    const r = await rerank({ model: 'sim-rerank', query: '東京 天気', documents: ['大阪の天気', '東京 天気 は 晴れ', 'emoji 🚀'] }, '/v2/rerank');
    expect(r.status, r.text).to.equal(200);
    expect(r.body.results[0].index).to.equal(1);
  });

  it('bounds each query + document pair by the model limit: a long query leaves less room for every document', async () => {
    const doc = 'word '.repeat(250).trim(); // 250 tokens
    const shortQuery = await rerank({ model: 'sim-rerank', query: 'word', documents: [doc, 'short'] });
    expect(shortQuery.status, shortQuery.text).to.equal(200);
    const longQuery = 'query '.repeat(300).trim(); // 300 tokens: 300 + 250 > 512
    await expectRejected(await rerank({ model: 'sim-rerank', query: longQuery, documents: ['short', doc] }), 400, 'input_too_long');
    const fits = await rerank({ model: 'sim-rerank', query: longQuery, documents: ['short', 'word '.repeat(200).trim()] });
    expect(fits.status, fits.text).to.equal(200);
    await expectRejected(await rerank({ model: 'sim-rerank', query: 'q '.repeat(600), documents: ['a'] }), 400, 'input_too_long');
    await expectRejected(await rerank({ model: 'sim-rerank', query: 'q', documents: ['a', 'x'.repeat(100_000)] }), 400, 'input_too_long');
  });

  const invalid: Array<[string, Record<string, unknown>, number, string]> = [
    ['missing model', { query: 'q', documents: ['a'] }, 400, 'invalid_input'],
    ['unknown model', { model: 'nope', query: 'q', documents: ['a'] }, 404, 'model_not_found'],
    ['embeddings model', { model: 'sim-embed', query: 'q', documents: ['a'] }, 400, 'model_not_rerank_capable'],
    ['chat model', { model: 'sim-chat', query: 'q', documents: ['a'] }, 400, 'model_not_rerank_capable'],
    ['decision model', { model: 'sim-decide', query: 'q', documents: ['a'] }, 400, 'model_not_rerank_capable'],
    ['missing query', { model: 'sim-rerank', documents: ['a'] }, 400, 'invalid_query'],
    ['null query', { model: 'sim-rerank', query: null, documents: ['a'] }, 400, 'invalid_query'],
    ['empty query', { model: 'sim-rerank', query: '', documents: ['a'] }, 400, 'invalid_query'],
    ['blank query', { model: 'sim-rerank', query: '   ', documents: ['a'] }, 400, 'invalid_query'],
    ['query a number', { model: 'sim-rerank', query: 7, documents: ['a'] }, 400, 'invalid_query'],
    ['query an array', { model: 'sim-rerank', query: ['q'], documents: ['a'] }, 400, 'invalid_query'],
    ['missing documents', { model: 'sim-rerank', query: 'q' }, 400, 'invalid_documents'],
    ['null documents', { model: 'sim-rerank', query: 'q', documents: null }, 400, 'invalid_documents'],
    ['empty documents', { model: 'sim-rerank', query: 'q', documents: [] }, 400, 'invalid_documents'],
    ['documents a string', { model: 'sim-rerank', query: 'q', documents: 'a' }, 400, 'invalid_documents'],
    ['document objects', { model: 'sim-rerank', query: 'q', documents: [{ text: 'a' }] }, 400, 'invalid_documents'],
    ['nested documents', { model: 'sim-rerank', query: 'q', documents: [['a']] }, 400, 'invalid_documents'],
    ['null document', { model: 'sim-rerank', query: 'q', documents: ['a', null] }, 400, 'invalid_documents'],
    ['number document', { model: 'sim-rerank', query: 'q', documents: [1] }, 400, 'invalid_documents'],
    ['empty document', { model: 'sim-rerank', query: 'q', documents: ['a', ''] }, 400, 'invalid_documents'],
    ['top_n 0', { model: 'sim-rerank', query: 'q', documents: ['a'], top_n: 0 }, 400, 'invalid_top_n'],
    ['top_n negative', { model: 'sim-rerank', query: 'q', documents: ['a'], top_n: -1 }, 400, 'invalid_top_n'],
    ['top_n fractional', { model: 'sim-rerank', query: 'q', documents: ['a'], top_n: 1.5 }, 400, 'invalid_top_n'],
    ['top_n a string', { model: 'sim-rerank', query: 'q', documents: ['a'], top_n: '3' }, 400, 'invalid_top_n'],
    ['top_n a boolean', { model: 'sim-rerank', query: 'q', documents: ['a'], top_n: true }, 400, 'invalid_top_n'],
    ['return_documents a string', { model: 'sim-rerank', query: 'q', documents: ['a'], return_documents: 'yes' }, 400, 'invalid_input'],
    ['unknown field', { model: 'sim-rerank', query: 'q', documents: ['a'], foo: true }, 400, 'unknown_field'],
    ['too many documents', { model: 'sim-rerank', query: 'q', documents: Array.from({ length: 1001 }, () => 'a') }, 400, 'batch_too_large'],
    ['huge documents array', { model: 'sim-rerank', query: 'q', documents: Array.from({ length: 200_000 }, () => 'a') }, 400, 'batch_too_large'],
  ];
  for (const [name, json, status, code] of invalid) {
    it(`rejects ${name}: ${status} ${code}, nothing sent upstream or billed`, async () => {
      await expectRejected(await rerank(json), status, code);
      expect(env().sim.log.entries).to.have.length(0);
    });
  }

  // Accepted and ignored, but typed as Cohere types them (v2: integers; v1: rank_fields strings).
  const ignoredWrong: Array<[string, unknown]> = [
    ['max_tokens_per_doc', -5], ['max_tokens_per_doc', 0], ['max_tokens_per_doc', 'x'], ['max_tokens_per_doc', 2.5],
    ['priority', 'high'], ['priority', -1], ['priority', 1000], ['priority', true],
    ['max_chunks_per_doc', '1'], ['max_chunks_per_doc', 0],
    ['rank_fields', 7], ['rank_fields', 'text'], ['rank_fields', [1]],
  ];
  it('refuses a mistyped accepted-and-ignored field with 400 invalid_input naming it, on both paths, billing nothing', async () => {
    for (const [field, value] of ignoredWrong) {
      for (const path of ['/v1/rerank', '/v2/rerank']) {
        const r = await rerank({ model: 'sim-rerank', query: 'capital', documents: DOCS, [field]: value }, path);
        await expectRejected(r, 400, 'invalid_input');
        expect(r.body.error.message, `${path} ${field}=${JSON.stringify(value)}`).to.match(new RegExp(`^'${field}' must be`));
      }
    }
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('rejects a 2 MiB + 1 byte body while reading', async () => {
    const r = await call('POST', '/v1/rerank', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: bodyOfSize(2 * 1024 * 1024 + 1, 'sim-rerank', 'query') });
    await expectRejected(r, 413, 'payload_too_large');
  });

  it('maps upstream failures and bills nothing for them', async () => {
    env().sim.knobs.set('sim-rerank-1', { status: 503, retryAfter: 0 });
    await expectRejected(await rerank({ model: 'sim-rerank', query: 'q', documents: ['a'] }), 503, 'upstream_unavailable');
    env().sim.knobs.set('sim-rerank-1', { malformed: true });
    await expectRejected(await rerank({ model: 'sim-rerank', query: 'q', documents: ['a'] }), 502, 'upstream_error');
    env().sim.knobs.set('sim-rerank-1', { status: 401 });
    await expectRejected(await rerank({ model: 'sim-rerank', query: 'q', documents: ['a'] }), 502, 'upstream_auth_failed'); // the platform's credential
  });
});
