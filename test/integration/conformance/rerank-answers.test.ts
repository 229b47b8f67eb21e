import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { post, expectRejected } from '../embeddings/helpers';
import { expectCohere } from '../../helpers/conformance';

const DOCS = ['Paris is the capital of France.', 'Bananas are rich in potassium.', 'Berlin is the capital of Germany.'];

/** Rerank against Cohere's API document (test/fixtures/vendor/cohere), on both paths. */
describe('conformance: rerank against the Cohere document', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);

  for (const path of ['/v1/rerank', '/v2/rerank']) {
    it(`${path}: answers (top_n, return_documents, a bare upstream) are the v2 rerank 200 body`, async () => {
      for (const extra of [{}, { top_n: 2 }, { return_documents: true }]) {
        const r = await post(o.key, path, { model: 'sim-rerank', query: 'capital of France', documents: DOCS, ...extra });
        expect(r.status, r.text).to.equal(200);
        expectCohere('/v2/rerank', 200, r.body);
        expect(r.body.meta.api_version.version).to.be.a('string');
      }
      env().sim.knobs.set('sim-rerank-1', { bareRerank: true });
      const bare = await post(o.key, path, { model: 'sim-rerank', query: 'capital of France', documents: DOCS, top_n: 1 });
      expect(bare.status, bare.text).to.equal(200);
      expectCohere('/v2/rerank', 200, bare.body);
    });
  }

  // The documented exception (docs/dialects.md, "Conformance"): the spec's envelope, not Cohere's `{ id, message }`.
  it("errors keep the spec's envelope { error: { code, message } } instead of Cohere's { message }", async () => {
    const r = await post(o.key, '/v2/rerank', { model: 'sim-rerank', query: '', documents: DOCS });
    await expectRejected(r, 400, 'invalid_query');
    expect(r.body).to.have.all.keys('error');
  });
});
