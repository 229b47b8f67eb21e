import { expect } from 'chai';
import OpenAI from 'openai';
import { CohereClientV2 } from 'cohere-ai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { expectCohereRequest } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { Model, Provider, UsageEvent } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { importCatalog } from '../../../shared/catalog/catalog-ops';

const COHERE_KEY = 'co-test-platform-key';

/** Embeddings served by a `cohere` provider: `POST {base}/v2/embed` (workers/providers/cohere/embed.ts). */
describe('cohere upstream: embeddings through Cohere v2 embed', () => {
  let o: TestOrg;
  let cohere: CohereClientV2;
  let openai: OpenAI;
  const provider = `cohere-embed-${Date.now()}`;
  before(async () => {
    await importCatalog(env().redis, {
      providers: [{ name: provider, kind: 'cohere', base_url: env().simUrl, api_key: COHERE_KEY }],
      models: [
        { id: 'test-cohere-embed', provider, upstream: 'sim-cohere-embed', capabilities: { embeddings: true }, context_window: 512, limits: { max_batch_size: 96, max_input_tokens: 512, dimensions: 256, supports_dimensions: true }, prices: { input_token: 0.1 } },
        // no limits declared: OpenAI's 2048 inputs a request
        { id: 'test-cohere-embed-wide', provider, upstream: 'sim-cohere-embed', capabilities: { embeddings: true }, context_window: 512, prices: { input_token: 0.1 } },
      ],
    });
    o = await buildOrg(env().redis);
    cohere = new CohereClientV2({ token: o.key, environment: env().gw.url });
    openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    const p = await Provider.findOne({ where: { name: provider } });
    await Model.destroy({ where: { providerId: p!.id } });
    await p!.destroy();
    await bumpEpoch(env().redis);
  });
  beforeEach(resetSim);

  const upstreamCalls = () => env().sim.log.entries.filter((e) => e.path === '/v2/embed');

  it("sends Cohere's v2 embed request (texts, the caller's input_type, float, output_dimension, truncate NONE, the provider's key) and bills the upstream's input tokens", async () => {
    const texts = ['what is the capital of France?', 'Paris'];
    const r = await cohere.embed({ model: 'test-cohere-embed', inputType: 'search_query', texts, embeddingTypes: ['float'], outputDimension: 64 });
    const [sent] = upstreamCalls();
    expect(sent, 'one call to /v2/embed').to.exist;
    expect(sent.body).to.deep.equal({ model: 'sim-cohere-embed', texts, input_type: 'search_query', embedding_types: ['float'], truncate: 'NONE', output_dimension: 64 });
    expectCohereRequest('/v2/embed', sent.body);
    expect(sent.authorization).to.equal(`Bearer ${COHERE_KEY}`);
    // the simulator's vectors are the same function of the text on both APIs
    const same = await openai.embeddings.create({ model: 'sim-embed', input: texts, dimensions: 64, encoding_format: 'float' });
    r.embeddings.float!.forEach((v, i) => v.forEach((x, j) => expect(x).to.be.closeTo(same.data[i].embedding[j], 1e-6)));
    expect(r.meta?.billedUnits?.inputTokens).to.equal(same.usage.prompt_tokens);
    await usageSettled();
    const [row] = await UsageEvent.findAll({ where: { requestId: r.id } });
    expect(row.inputTokens, "the upstream's meta.billed_units.input_tokens").to.equal(same.usage.prompt_tokens);
  });

  it("a v2 embed request's text inputs reach Cohere as texts (each input's parts joined by a newline), with the caller's input_type", async () => {
    const r = await cohere.embed({ model: 'test-cohere-embed', inputType: 'classification', inputs: [{ content: [{ type: 'text', text: 'hello' }, { type: 'text', text: 'goodbye' }] }], embeddingTypes: ['float'] });
    const [sent] = upstreamCalls();
    expect(sent.body).to.deep.include({ texts: ['hello\ngoodbye'], input_type: 'classification' });
    expectCohereRequest('/v2/embed', sent.body);
    expect(r.embeddings.float).to.have.length(1);
    expect(r.texts).to.deep.equal([]);
  });

  it('serves /v1/embeddings too: input_type search_document (the OpenAI shape has none), base64 encoded by the gateway', async () => {
    const r = await openai.embeddings.create({ model: 'test-cohere-embed', input: 'a document to index', encoding_format: 'base64' });
    const [sent] = upstreamCalls();
    expect(sent.body).to.include({ input_type: 'search_document', truncate: 'NONE' });
    expect((sent.body as { texts: string[] }).texts).to.deep.equal(['a document to index']);
    expectCohereRequest('/v2/embed', sent.body);
    const b64 = r.data[0].embedding as unknown as string;
    const floats = await openai.embeddings.create({ model: 'test-cohere-embed', input: 'a document to index', encoding_format: 'float' });
    const buf = Buffer.from(b64, 'base64');
    expect(buf.length).to.equal(256 * 4);
    floats.data[0].embedding.forEach((x, i) => expect(buf.readFloatLE(i * 4)).to.be.closeTo(x, 1e-6));
  });

  it("embedding_types: a Cohere upstream is asked for each type (float always) and its own int8, uint8 and binary are answered as it sent them", async () => {
    const texts = ['quantise me', 'me too'];
    const r = await cohere.embed({ model: 'test-cohere-embed', inputType: 'search_document', texts, embeddingTypes: ['int8', 'binary', 'uint8'] });
    const [sent] = upstreamCalls();
    expect((sent.body as { embedding_types: string[] }).embedding_types).to.deep.equal(['float', 'int8', 'binary', 'uint8']);
    expectCohereRequest('/v2/embed', sent.body);
    expect(Object.keys(r.embeddings), 'the types asked for, float not among them').to.deep.equal(['int8', 'binary', 'uint8']);
    // the upstream's own figures, straight from it for the same body
    const direct = await fetch(`${env().simUrl}/v2/embed`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sent.body) });
    const own = (await direct.json()) as { embeddings: Record<string, number[][]> };
    expect(r.embeddings.int8).to.deep.equal(own.embeddings.int8);
    expect(r.embeddings.uint8).to.deep.equal(own.embeddings.uint8);
    expect(r.embeddings.binary).to.deep.equal(own.embeddings.binary);
    await usageSettled();
    const [row] = await UsageEvent.findAll({ where: { requestId: r.id } });
    expect(row.inputTokens).to.equal(r.meta?.billedUnits?.inputTokens);

    // float alone asks for float alone, as before
    await cohere.embed({ model: 'test-cohere-embed', inputType: 'search_document', texts, embeddingTypes: ['float'] });
    expect((upstreamCalls()[2].body as { embedding_types: string[] }).embedding_types).to.deep.equal(['float']);
  });

  // Cohere's embed takes at most 96 texts a call (the simulator refuses more, as Cohere does)
  it('embeds more inputs than one Cohere call takes as consecutive calls of 96, in order, billed the tokens of all', async () => {
    const input = Array.from({ length: 200 }, (_, i) => `text number ${i}`);
    const r = await openai.embeddings.create({ model: 'test-cohere-embed-wide', input, encoding_format: 'float' });
    const calls = upstreamCalls().map((c) => (c.body as { texts: string[] }).texts);
    expect(calls.map((t) => t.length)).to.deep.equal([96, 96, 8]);
    expect(calls.flat()).to.deep.equal(input);
    expect(r.data.map((d) => d.index)).to.deep.equal(input.map((_, i) => i));
    const alone = await openai.embeddings.create({ model: 'test-cohere-embed-wide', input: input[150], encoding_format: 'float' });
    r.data[150].embedding.forEach((x, j) => expect(x).to.be.closeTo(alone.data[0].embedding[j], 1e-9));
    const perCall = await Promise.all([input.slice(0, 96), input.slice(96, 192), input.slice(192)].map((texts) => cohere.embed({ model: 'test-cohere-embed', inputType: 'search_document', texts, embeddingTypes: ['float'] })));
    const billed = perCall.reduce((n, x) => n + x.meta!.billedUnits!.inputTokens!, 0);
    expect(r.usage.prompt_tokens).to.equal(billed);
    await usageSettled();
    const rows = await UsageEvent.findAll({ where: { requestId: (r as unknown as { id: string }).id } });
    expect(rows.map((x) => x.inputTokens)).to.deep.equal([billed]);
    // OpenAI's 300,000 tokens a request is not Cohere's: a model served by Cohere has no such default
    const listed = await fetch(`${env().gw.url}/v1/embeddings/models`, { headers: { 'SERVICE-API-KEY': o.key } }).then((x) => x.json() as Promise<{ data: Array<{ id: string; limits: Record<string, unknown> }> }>);
    expect(listed.data.find((m) => m.id === 'test-cohere-embed-wide')!.limits).to.include({ max_batch_size: 2048, max_tokens_per_request: null });
  });

  it('an upstream failure or a malformed answer is a 502 with nothing billed', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const knob of [{ status: 500 }, { malformed: true }]) {
      env().sim.knobs.set('sim-cohere-embed', knob);
      const r = await fetch(`${env().gw.url}/v2/embed`, {
        method: 'POST',
        headers: { authorization: `Bearer ${o.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test-cohere-embed', input_type: 'clustering', texts: ['x'] }),
      });
      const text = await r.text();
      expect(r.status, `${JSON.stringify(knob)}: ${text}`).to.be.within(500, 599);
      expect(text).not.to.match(/\bat .+\.js:\d+/);
      env().sim.knobs.set('sim-cohere-embed', {});
    }
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });
});
