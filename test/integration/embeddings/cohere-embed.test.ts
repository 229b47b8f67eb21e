import { expect } from 'chai';
import { CohereClient, CohereError } from 'cohere-ai';
import { env } from '../../helpers/harness';
import { expectCohere } from '../../helpers/conformance';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { expectRejected, post, suiteClients } from './helpers';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { Model } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';

/** Cohere's `POST /v2/embed` through `CohereClientV2.embed`, served by the embeddings pool. */
describe('POST /v2/embed (Cohere v2 embed)', () => {
  const c = suiteClients();

  it("answers CohereClientV2.embed with float embeddings, the texts and billed input tokens: the same vectors as /v1/embeddings, billed once", async () => {
    const texts = ['hello world', 'a second, longer text to embed'];
    const r = await c.cohere.embed({ model: 'sim-embed', inputType: 'search_document', texts, embeddingTypes: ['float'] });
    expect(r.embeddings.float).to.have.length(2);
    expect(r.texts).to.deep.equal(texts);
    const same = await c.openai.embeddings.create({ model: 'sim-embed', input: texts, encoding_format: 'float' });
    r.embeddings.float!.forEach((v, i) => expect(v).to.deep.equal(same.data[i].embedding));
    expect(r.meta?.billedUnits?.inputTokens).to.equal(same.usage.prompt_tokens);
    expect(r.meta?.apiVersion?.version).to.equal('2');
    await usageSettled();
    const rows = await UsageEvent.findAll({ where: { requestId: r.id } });
    expect(rows, 'one usage event under the answer id').to.have.length(1);
    expect(rows[0].inputTokens).to.equal(same.usage.prompt_tokens);

    const raw = await post(c.o.key, '/v2/embed', { model: 'sim-embed', input_type: 'search_query', texts: ['hello world'] });
    expect(raw.status, raw.text).to.equal(200);
    expect(raw.body).to.include({ response_type: 'embeddings_by_type', id: raw.headers.get('x-service-request-id') });
    // Cohere's document lists `api_version` as required at the top level of EmbedByTypeResponse, where
    // its API (and its SDK's type) carry it in `meta`: checked against the document with that one key added.
    expectCohere('/v2/embed', 200, { ...raw.body, api_version: raw.body.meta.api_version });
    expect(raw.body.embeddings.float[0], 'embedding_types omitted: float').to.have.length(256);
  });

  it('output_dimension is the OpenAI dimensions: shorter vectors, and 400 past the model', async () => {
    const r = await c.cohere.embed({ model: 'sim-embed', inputType: 'clustering', texts: ['dimensions'], outputDimension: 32 });
    expect(r.embeddings.float![0]).to.have.length(32);
    expect(env().sim.log.entries.at(-1)!.body).to.include({ dimensions: 32, encoding_format: 'float' });
    const over = await post(c.o.key, '/v2/embed', { model: 'sim-embed', input_type: 'clustering', texts: ['x'], output_dimension: 100_000 });
    await expectRejected(over, 400, 'invalid_input');
    expect(over.body.error.message).to.include("'output_dimension'");
  });

  it('refuses what it cannot serve as Cohere would have it, 400 naming the field, nothing sent or billed', async () => {
    const base = { model: 'sim-embed', input_type: 'search_document', texts: ['x'] };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ ...base, input_type: undefined }, 'invalid_input', "'input_type' is required"],
      [{ ...base, input_type: 'search' }, 'invalid_input', "'input_type' must be one of"],
      [{ ...base, input_type: 'image' }, 'invalid_input', "'input_type' 'image'"],
      [{ ...base, texts: [] }, 'invalid_input', "'texts' must not be empty"],
      [{ ...base, texts: ['a', 7] }, 'invalid_input', "'texts[1]'"],
      [{ ...base, texts: ['a', ''] }, 'invalid_input', "'texts[1]' must not be an empty string"],
      [{ ...base, texts: Array.from({ length: 97 }, () => 'a') }, 'batch_too_large', 'at most 96'],
      [{ ...base, texts: undefined, images: ['data:image/png;base64,AAAA'] }, 'invalid_input', "'images' is not supported"],
      [{ ...base, texts: undefined, inputs: [{ content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] }, 'invalid_input', "'inputs[0].content[0]' is an image"],
      [{ ...base, embedding_types: ['int8'] }, 'invalid_input', '"int8" needs a model served by Cohere'],
      [{ ...base, embedding_types: ['float', 'base64', 'uint8'] }, 'invalid_input', '"uint8" needs a model served by Cohere'],
      [{ ...base, embedding_types: [] }, 'invalid_input', "'embedding_types' must be"],
      [{ ...base, embedding_types: ['floats'] }, 'invalid_input', "'embedding_types' must be"],
      [{ ...base, truncate: 'MIDDLE' }, 'invalid_input', "'truncate'"],
      [{ ...base, max_tokens: 0 }, 'invalid_input', "'max_tokens'"],
      [{ ...base, priority: 1000 }, 'invalid_input', "'priority'"],
      [{ ...base, model: 'sim-chat' }, 'model_not_embedding_capable', ''],
      [{ ...base, encoding_format: 'float' }, 'unknown_field', "'encoding_format'"],
    ];
    for (const [body, code, says] of cases) {
      const r = await post(c.o.key, '/v2/embed', body);
      await expectRejected(r, 400, code);
      expect(r.body.error.message, JSON.stringify(body).slice(0, 200)).to.include(says);
    }
    expect(env().sim.log.entries, 'nothing reached the upstream').to.have.length(0);

    const sdk = await c.cohere.embed({ model: 'sim-embed', inputType: 'search_query', texts: ['x'], embeddingTypes: ['int8'] }).catch((e: unknown) => e);
    expect(sdk).to.be.instanceOf(CohereError);
    expect((sdk as CohereError).statusCode).to.equal(400);
  });

  it('embedding_types: base64, binary and ubinary computed from the floats for a model of any upstream, each type once, in the order asked; billed once', async () => {
    const texts = ['pack these bits', 'and these'];
    const r = await c.cohere.embed({ model: 'sim-embed', inputType: 'search_document', texts, embeddingTypes: ['ubinary', 'float', 'binary', 'base64', 'ubinary'] });
    const [sent] = env().sim.log.entries;
    expect(sent.body, 'an OpenAI-kind upstream is asked for floats only').to.include({ encoding_format: 'float' });
    expect(Object.keys(r.embeddings)).to.deep.equal(['ubinary', 'float', 'binary', 'base64']);
    const floats = r.embeddings.float!;
    floats.forEach((v, i) => {
      const bits = v.map((x) => (x > 0 ? 1 : 0));
      const bytes = Array.from({ length: Math.ceil(v.length / 8) }, (_, b) => parseInt(bits.slice(b * 8, b * 8 + 8).join('').padEnd(8, '0'), 2));
      expect(r.embeddings.ubinary![i], 'ubinary: the sign bits, 8 to a byte').to.deep.equal(bytes);
      expect(r.embeddings.binary![i], 'binary: ubinary - 128').to.deep.equal(bytes.map((b) => b - 128));
      const raw = Buffer.from(r.embeddings.base64![i], 'base64');
      expect(raw.length).to.equal(v.length * 4);
      v.forEach((x, j) => expect(raw.readFloatLE(j * 4)).to.equal(Math.fround(x)));
    });
    expect(r.embeddings.ubinary![0], '256 dimensions: 32 bytes').to.have.length(32);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.id } })).to.equal(1);

    const raw = await post(c.o.key, '/v2/embed', { model: 'sim-embed', input_type: 'search_query', texts: ['only base64'], embedding_types: ['base64'] });
    expect(raw.status, raw.text).to.equal(200);
    expect(Object.keys(raw.body.embeddings), 'float is not answered when not asked').to.deep.equal(['base64']);
    expectCohere('/v2/embed', 200, { ...raw.body, api_version: raw.body.meta.api_version });
  });

  it("serves Cohere's v1 embed (CohereClient.embed): floats as EmbedFloatsResponse without embedding_types, by type with them; input_type optional; v2's fields refused", async () => {
    const v1 = new CohereClient({ token: c.o.key, environment: env().gw.url });
    const texts = ['v1 clients still embed', 'through /v1/embed'];
    const floats = await v1.embed({ model: 'sim-embed', texts });
    expect(floats.responseType).to.equal('embeddings_floats');
    const v2 = await c.cohere.embed({ model: 'sim-embed', inputType: 'search_document', texts, embeddingTypes: ['float'] });
    expect((floats as { embeddings: number[][] }).embeddings).to.deep.equal(v2.embeddings.float);
    const raw = await post(c.o.key, '/v1/embed', { model: 'sim-embed', texts: ['raw'], input_type: 'search_query' });
    expect(raw.status, raw.text).to.equal(200);
    expect(raw.body).to.include({ response_type: 'embeddings_floats' });
    expect(raw.body.meta.api_version.version).to.equal('1');
    expectCohere('/v1/embed', 200, { ...raw.body, api_version: raw.body.meta.api_version });
    const typed = await v1.embed({ model: 'sim-embed', texts, inputType: 'classification', embeddingTypes: ['float', 'ubinary'] });
    expect(typed.responseType).to.equal('embeddings_by_type');
    expect((typed as { embeddings: { ubinary: number[][] } }).embeddings.ubinary[0]).to.have.length(32);
    const refused = await post(c.o.key, '/v1/embed', { model: 'sim-embed', texts: ['x'], output_dimension: 32 });
    await expectRejected(refused, 400, 'unknown_field');
  });

  it('never truncates: a text past the model limit is 400 input_too_long, whatever truncate says; truncate, max_tokens and priority change nothing within it', async () => {
    const long = 'word '.repeat(20_000);
    for (const truncate of [undefined, 'END', 'START', 'NONE']) {
      const r = await post(c.o.key, '/v2/embed', { model: 'sim-embed', input_type: 'search_document', texts: ['short', long], ...(truncate ? { truncate } : {}) });
      await expectRejected(r, 400, 'input_too_long');
      expect(r.body.error.message).to.include("'texts[1]'");
    }
    const plain = await c.cohere.embed({ model: 'sim-embed', inputType: 'classification', texts: ['within the limit'] });
    const knobs = await c.cohere.embed({ model: 'sim-embed', inputType: 'classification', texts: ['within the limit'], truncate: 'START', maxTokens: 3, priority: 5 });
    expect(knobs.embeddings.float).to.deep.equal(plain.embeddings.float);
  });

  it('int8/uint8 on a model whose pool mixes a Cohere deployment with an OpenAI-compatible one: served by the Cohere deployment only, billed once; the primary need not be Cohere', async () => {
    const coh = { name: 'coh', provider: 'simulator-cohere', upstream: `coh-${rndId()}`, weight: 1 };
    // the OpenAI-compatible deployment first (the model's primary provider) and far heavier: it would take nearly every request
    const model = await poolModel([simDeployment('oai', { weight: 100 }), coh], { capabilities: { embeddings: true } });
    try {
      const texts = ['quantise me', 'and me'];
      for (let i = 0; i < 6; i++) {
        const r = await post(c.o.key, '/v2/embed', { model, input_type: 'search_document', texts, embedding_types: ['float', 'int8', 'uint8'] });
        expect(r.status, r.text).to.equal(200);
        expect(r.headers.get('x-service-deployment')).to.equal('coh');
        expect(r.body.embeddings.int8).to.have.length(2);
        expect(r.body.embeddings.uint8).to.have.length(2);
        await usageSettled();
        const rows = await UsageEvent.findAll({ where: { requestId: r.body.id } });
        expect(rows.map((e) => e.deployment)).to.deep.equal(['coh']);
      }
      const sdk = await c.cohere.embed({ model, inputType: 'classification', texts, embeddingTypes: ['int8'] });
      expect(sdk.embeddings.int8).to.have.length(2);
      expect(env().sim.log.entries.every((e) => e.model === coh.upstream), 'only the Cohere deployment was asked').to.equal(true);
      // floats alone are served by the whole pool, as before
      const float = await post(c.o.key, '/v2/embed', { model, input_type: 'search_document', texts: ['x'] });
      expect(float.status, float.text).to.equal(200);
    } finally {
      await Model.destroy({ where: { publicId: model } });
      await bumpEpoch(env().redis);
    }
  });

  // Cohere embeds at most `max_tokens` of each text ("If the input text is longer than this, it will be
  // truncated according to the truncate parameter"; under NONE it refuses): the gateway cuts nothing, so
  // a text past the caller's cap is refused, never embedded (and billed) whole as if the cap were not there
  it("max_tokens caps each text as Cohere's does: a text past it is 400 input_too_long naming it and max_tokens, whatever truncate says; nothing sent or billed", async () => {
    const texts = ['within the limit', 'a text of rather more than three tokens'];
    for (const truncate of [undefined, 'END', 'START', 'NONE']) {
      const r = await post(c.o.key, '/v2/embed', { model: 'sim-embed', input_type: 'search_document', texts, max_tokens: 3, ...(truncate ? { truncate } : {}) });
      await expectRejected(r, 400, 'input_too_long');
      expect(r.body.error.message).to.include("'texts[1]'").and.include("'max_tokens' (3 tokens)");
    }
    let sdk: unknown;
    await c.cohere.embed({ model: 'sim-embed', inputType: 'search_document', texts, maxTokens: 3, truncate: 'END' }).catch((e: unknown) => (sdk = e));
    expect(sdk).to.be.instanceOf(CohereError);
    expect((sdk as CohereError).statusCode).to.equal(400);
    expect(((sdk as CohereError).body as { error: { code: string } }).error.code).to.equal('input_too_long');
    expect(env().sim.log.entries, 'nothing reached the upstream').to.have.length(0);
    // a cap above the model's own limit leaves the model's limit (and its message) in force
    const long = 'word '.repeat(20_000);
    const over = await post(c.o.key, '/v2/embed', { model: 'sim-embed', input_type: 'search_document', texts: [long], max_tokens: 1_000_000 });
    await expectRejected(over, 400, 'input_too_long');
    expect(over.body.error.message).to.include("the model's limit");
  });
});
