import { expect } from 'chai';
import OpenAI from 'openai';
import { CohereClientV2, CohereError } from 'cohere-ai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { UsageEvent } from '../../../shared/db/models';
import { cosine } from './helpers';
import { usageSettled } from '../../helpers/usage';

describe('official clients: openai embeddings.create and cohere-ai v2 rerank through the gateway', () => {
  let o: TestOrg;
  let openai: OpenAI;
  let cohere: CohereClientV2;
  before(async () => {
    o = await buildOrg(env().redis);
    openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    cohere = new CohereClientV2({ token: o.key, environment: env().gw.url });
  });
  beforeEach(resetSim);

  it('openai: float embeddings', async () => {
    const r = await openai.embeddings.create({ model: 'sim-embed', input: ['hello world', 'hello there world'], encoding_format: 'float' });
    expect(r.model).to.equal('sim-embed');
    expect(r.data).to.have.length(2);
    expect(r.data[0].embedding).to.have.length(256);
    expect(r.usage.prompt_tokens).to.be.greaterThan(0);
    expect(cosine(r.data[0].embedding, r.data[1].embedding)).to.be.greaterThan(0.5);
  });

  it('openai: base64 embeddings (explicit, returned as strings) and the default (base64 on the wire, decoded by the SDK)', async () => {
    const f = await openai.embeddings.create({ model: 'sim-embed', input: 'same text', encoding_format: 'float', dimensions: 32 });
    const b = await openai.embeddings.create({ model: 'sim-embed', input: 'same text', encoding_format: 'base64', dimensions: 32 });
    expect(b.data[0].embedding).to.be.a('string');
    const buf = Buffer.from(b.data[0].embedding as unknown as string, 'base64');
    expect(buf.length).to.equal(32 * 4);
    const d = await openai.embeddings.create({ model: 'sim-embed', input: 'same text', dimensions: 32 });
    expect(d.data[0].embedding).to.have.length(32);
    d.data[0].embedding.forEach((x, i) => expect(x).to.be.closeTo(f.data[0].embedding[i], 1e-6));
    expect(env().sim.log.entries.every((e) => (e.body as { encoding_format: string }).encoding_format === 'float')).to.equal(true);
  });

  it('openai: a spec error reaches the SDK as a typed error with the code', async () => {
    try {
      await openai.embeddings.create({ model: 'sim-embed', input: [''] });
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('invalid_input');
    }
  });

  it('cohere-ai: CohereClientV2.rerank with the gateway as its environment', async () => {
    const docs = ['Paris is the capital of France.', 'Berlin is in Germany.', 'The capital of France has many museums.'];
    const r = await cohere.rerank({ model: 'sim-rerank', query: 'capital of France', documents: docs, topN: 2 });
    expect(r.results).to.have.length(2);
    expect(r.results.map((x) => x.index).sort()).to.deep.equal([0, 2]);
    expect(r.results[0].relevanceScore).to.be.at.least(r.results[1].relevanceScore);
    expect(r.meta?.billedUnits?.searchUnits).to.equal(1);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.id! } })).to.equal(1);
  });

  it('cohere-ai: a spec error reaches the SDK as a 400', async () => {
    try {
      await cohere.rerank({ model: 'sim-rerank', query: 'q', documents: [], topN: 1 });
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(CohereError);
      expect((err as CohereError).statusCode).to.equal(400);
      expect(((err as CohereError).body as { error: { code: string } }).error.code).to.equal('invalid_documents');
    }
  });
});
