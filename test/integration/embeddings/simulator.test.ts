import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { call } from '../../helpers/http';
import { cosine } from './helpers';

/** The simulator as an upstream, called directly: its answers are computed from the input. */
describe('upstream simulator: OpenAI embeddings and Cohere v2 rerank', () => {
  const sim = (path: string, json: unknown) => call('POST', path, { json, base: env().simUrl });

  it('embeds deterministically, honours dimensions and encoding_format, and counts tokens', async () => {
    const a = await sim('/v1/embeddings', { model: 'm', input: ['graph databases store edges', 'graph database stores an edge', 'banana bread recipe'] });
    expect(a.status).to.equal(200);
    const [x, y, z] = a.body.data.map((d: { embedding: number[] }) => d.embedding);
    expect(cosine(x, y)).to.be.greaterThan(cosine(x, z));
    expect(a.body.usage.prompt_tokens).to.be.greaterThan(9);
    const again = await sim('/v1/embeddings', { model: 'm', input: 'graph databases store edges', dimensions: 16, encoding_format: 'base64' });
    const buf = Buffer.from(again.body.data[0].embedding, 'base64');
    const v = Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4));
    expect(v).to.have.length(16);
    const norm = Math.sqrt(x.slice(0, 16).reduce((s: number, n: number) => s + n * n, 0));
    v.forEach((n, i) => expect(n).to.be.closeTo(x[i] / norm, 1e-5)); // shortened = leading dims, re-normalised
    expect((await sim('/v1/embeddings', { model: 'm', input: [] })).status).to.equal(400);
  });

  it('gives short inputs shortened to a few dimensions a unit vector, never all zeros', async () => {
    const inputs = ['hello', 'a', 'x', 'hi there', '?!', 'graph databases store edges'];
    for (const dimensions of [1, 4, 8]) {
      const r = await sim('/v1/embeddings', { model: 'm', input: inputs, dimensions });
      expect(r.status, r.text).to.equal(200);
      r.body.data.forEach((d: { embedding: number[] }, i: number) => {
        expect(d.embedding).to.have.length(dimensions);
        expect(Math.hypot(...d.embedding), `'${inputs[i]}' at ${dimensions}`).to.be.closeTo(1, 1e-5);
      });
    }
  });

  it('reranks by lexical relevance with top_n and bills search units per 100 documents', async () => {
    const docs = Array.from({ length: 101 }, (_, i) => (i === 42 ? 'the red fox jumps' : `filler text ${i}`));
    const r = await sim('/v2/rerank', { model: 'm', query: 'red fox', documents: docs, top_n: 3 });
    expect(r.status).to.equal(200);
    expect(r.body.results).to.have.length(3);
    expect(r.body.results[0].index).to.equal(42);
    expect(r.body.meta.billed_units.search_units).to.equal(2);
    expect((await sim('/v2/rerank', { model: 'm', query: 'q', documents: 'nope' })).status).to.equal(400);
  });
});
