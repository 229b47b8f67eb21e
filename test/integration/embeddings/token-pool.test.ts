import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { tokenizerPoolRuns } from '../../../shared/tokenizer/pool';

/**
 * Embeddings and rerank limit checks count large inputs on the tokenizer pool (worker threads), not
 * on the event loop, with the same per-input limits (sim-embed and sim-rerank: 512 tokens).
 */
describe('embeddings and rerank token counting off the event loop', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);
  const post = (path: string, json: unknown) => call('POST', path, { headers: keyHeader(o.key), json });
  const hundredTokens = 'hello '.repeat(100).trim(); // ~600 bytes

  it('a small embeddings request is counted inline; a large batch (64 × 600 bytes) on the pool, and answered', async () => {
    let before = tokenizerPoolRuns();
    const small = await post('/v1/embeddings', { model: 'sim-embed', input: ['hi'] });
    expect(small.status, small.text).to.equal(200);
    expect(tokenizerPoolRuns(), 'small input counted inline').to.equal(before);

    before = tokenizerPoolRuns();
    const large = await post('/v1/embeddings', { model: 'sim-embed', input: Array.from({ length: 64 }, () => hundredTokens) });
    expect(large.status, large.text).to.equal(200);
    expect(tokenizerPoolRuns(), 'large batch counted on the pool').to.equal(before + 1);
    expect(large.body.usage.prompt_tokens).to.equal(64 * 100);
  });

  it('an input over the limit in a large batch is still refused by name, never truncated', async () => {
    const input = Array.from({ length: 64 }, () => hundredTokens);
    input[40] = 'hello '.repeat(600).trim();
    const before = tokenizerPoolRuns();
    const r = await post('/v1/embeddings', { model: 'sim-embed', input });
    expect(r.status, r.text).to.equal(400);
    expectErrorEnvelope(r.text, 'input_too_long');
    expect(r.body.error.message).to.include("'input[40]'");
    expect(tokenizerPoolRuns()).to.equal(before + 1);
    expect(env().sim.log.entries, 'nothing dispatched').to.have.length(0);
  });

  it('rerank: a thousand documents are counted on the pool; a pair over the limit is refused by name', async () => {
    const documents = Array.from({ length: 1000 }, (_, i) => `document number ${i} about foxes and dogs`);
    let before = tokenizerPoolRuns();
    const ok = await post('/v1/rerank', { model: 'sim-rerank', query: 'foxes', documents });
    expect(ok.status, ok.text).to.equal(200);
    expect(tokenizerPoolRuns(), 'documents counted on the pool').to.be.above(before);

    documents[999] = 'hello '.repeat(520).trim();
    before = tokenizerPoolRuns();
    const over = await post('/v1/rerank', { model: 'sim-rerank', query: 'foxes', documents });
    expect(over.status, over.text).to.equal(400);
    expectErrorEnvelope(over.text, 'input_too_long');
    expect(over.body.error.message).to.include("'documents[999]'");
    expect(tokenizerPoolRuns()).to.be.above(before);
  });
});
