import { expect } from 'chai';
import { streamUntilAnswered } from '../../helpers/stream-upload';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { UsageEvent } from '../../../shared/db/models';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { bodyOfSize, cosine, expectRejected, post } from './helpers';
import { usageSettled } from '../../helpers/usage';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';

const MiB2 = 2 * 1024 * 1024;

describe('POST /v1/embeddings', () => {
  let o: TestOrg;
  const embed = (json: unknown) => post(o.key, '/v1/embeddings', json);
  before(async () => {
    o = await buildOrg(env().redis);
    // An embeddings model that does not support `dimensions`.
    await upsertModel({ id: 'sim-embed-fixed', provider: 'simulator', upstream: 'sim-embed-1', capabilities: { embeddings: true }, limits: { max_batch_size: 4, max_input_tokens: 64 } });
    // One whose inputs may add up to 100 tokens a request, and one with OpenAI's published defaults (no limits declared).
    await upsertModel({ id: 'sim-embed-summed', provider: 'simulator', upstream: 'sim-embed-1', capabilities: { embeddings: true }, limits: { max_batch_size: 8, max_input_tokens: 64, max_tokens_per_request: 100 } });
    await upsertModel({ id: 'sim-embed-defaults', provider: 'simulator', upstream: 'sim-embed-1', capabilities: { embeddings: true }, context_window: 8192 });
    await bumpEpoch(env().redis);
  });
  beforeEach(resetSim);

  it('embeds a string: OpenAI body, public model id, request id, unit-length vector, one usage event', async () => {
    const r = await embed({ model: 'sim-embed', input: 'The quick brown fox' });
    expect(r.status, r.text).to.equal(200);
    const id = r.headers.get('x-service-request-id');
    expect(r.body).to.include({ object: 'list', model: 'sim-embed', id });
    expect(r.body.data).to.have.length(1);
    expect(r.body.data[0]).to.include({ object: 'embedding', index: 0 });
    const v: number[] = r.body.data[0].embedding;
    expect(v).to.have.length(256);
    expect(Math.sqrt(v.reduce((s, x) => s + x * x, 0))).to.be.closeTo(1, 1e-5);
    expect(r.body.usage.prompt_tokens).to.be.greaterThan(0);
    expect(r.body.usage.total_tokens).to.equal(r.body.usage.prompt_tokens);
    expect(env().sim.log.entries.map((e) => [e.path, e.model])).to.deep.equal([['/v1/embeddings', 'sim-embed-1']]);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId: id! } });
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ orgId: o.org.id, model: 'sim-embed', modality: 'embeddings', inputTokens: r.body.usage.prompt_tokens, outputTokens: 0 });
  });

  it('embeds an array in order; similar texts get closer vectors; same text, same vector', async () => {
    const texts = ['the cat sat on the mat', 'a cat sat on a mat', 'quarterly revenue grew by ten percent', 'the cat sat on the mat'];
    const r = await embed({ model: 'sim-embed', input: texts, user: 'user-123' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.map((d: { index: number }) => d.index)).to.deep.equal([0, 1, 2, 3]);
    const [a, b, c, d] = r.body.data.map((x: { embedding: number[] }) => x.embedding);
    expect(cosine(a, b)).to.be.greaterThan(cosine(a, c) + 0.3);
    expect(a).to.deep.equal(d);
  });

  it('honours dimensions and base64 (little-endian float32, same vector as float)', async () => {
    const short = await embed({ model: 'sim-embed', input: 'dimension test', dimensions: 64 });
    expect(short.status, short.text).to.equal(200);
    expect(short.body.data[0].embedding).to.have.length(64);
    const b64 = await embed({ model: 'sim-embed', input: 'dimension test', dimensions: 64, encoding_format: 'base64' });
    expect(b64.status, b64.text).to.equal(200);
    expect(b64.body.data[0].embedding).to.be.a('string');
    const buf = Buffer.from(b64.body.data[0].embedding, 'base64');
    const decoded = Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4));
    expect(decoded).to.have.length(64);
    decoded.forEach((x, i) => expect(x).to.be.closeTo(short.body.data[0].embedding[i], 1e-6));
  });

  it('takes unicode, emoji and special-token text as ordinary text; null optional fields mean the default', async () => {
    const r = await embed({ model: 'sim-embed', input: ['日本語のテキスト', 'emoji 🚀🔥 text', 'x <|endoftext|> y', 'Ünïcödé'], encoding_format: null, dimensions: null, user: null });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data).to.have.length(4);
  });

  it('accepts inputs exactly at the token limit and at the batch size', async () => {
    const r = await embed({ model: 'sim-embed-fixed', input: ['one', 'two', 'three', 'word '.repeat(63).trim()] });
    expect(r.status, r.text).to.equal(200);
  });

  // OpenAI's CreateEmbeddingRequest: "all embedding models enforce a maximum of 300,000 tokens summed
  // across all inputs in a single request": refused here, not after a lane and an upstream 400.
  it("bounds the tokens of all inputs together by the model's max_tokens_per_request (OpenAI's 300,000 by default)", async () => {
    const fifty = 'word '.repeat(50).trim(); // 50 tokens
    const at = await embed({ model: 'sim-embed-summed', input: [fifty, fifty] });
    expect(at.status, at.text).to.equal(200);
    expect(at.body.usage.prompt_tokens).to.equal(100);
    resetSim();
    const over = await embed({ model: 'sim-embed-summed', input: [fifty, fifty, 'word'] });
    await expectRejected(over, 400, 'batch_too_large');
    expect(over.body.error).to.include({ param: 'input' });
    expect(over.body.error.message).to.include('101 tokens').and.include('100 tokens per request');
    const cohere = await post(o.key, '/v2/embed', { model: 'sim-embed-summed', input_type: 'search_query', texts: [fifty, fifty, 'word'] });
    await expectRejected(cohere, 400, 'batch_too_large');
    expect(cohere.body.error.message).to.match(/^'texts' has 101 tokens/);
    // 40 inputs of 8,000 tokens: each within OpenAI's 8,192, 1.6 MB within the 2 MiB body, 320,000 tokens in all
    const big = await embed({ model: 'sim-embed-defaults', input: Array.from({ length: 40 }, () => 'word '.repeat(8000).trim()) });
    await expectRejected(big, 400, 'batch_too_large');
    expect(big.body.error.message).to.include('320000 tokens').and.include('at most 300000');
    expect(env().sim.log.entries).to.have.length(0);
    const listed = await call('GET', '/v1/embeddings/models', { headers: keyHeader(o.key) });
    const limits = (id: string) => listed.body.data.find((m: { id: string }) => m.id === id).limits;
    expect(limits('sim-embed-summed').max_tokens_per_request).to.equal(100);
    expect(limits('sim-embed-defaults')).to.include({ max_batch_size: 2048, max_input_tokens: 8192, max_tokens_per_request: 300_000 });
  });

  const invalid: Array<[string, Record<string, unknown>, number, string]> = [
    ['missing model', { input: 'x' }, 400, 'invalid_input'],
    ['model a number', { model: 5, input: 'x' }, 400, 'invalid_input'],
    ['model null', { model: null, input: 'x' }, 400, 'invalid_input'],
    ['unknown model', { model: 'no-such-model', input: 'x' }, 404, 'model_not_found'],
    ['background variant', { model: 'sim-embed-background', input: 'x' }, 404, 'model_not_found'],
    ['chat model', { model: 'sim-chat', input: 'x' }, 400, 'model_not_embedding_capable'],
    ['rerank model', { model: 'sim-rerank', input: 'x' }, 400, 'model_not_embedding_capable'],
    ['decision model', { model: 'sim-decide', input: 'x' }, 400, 'model_not_embedding_capable'],
    ['missing input', { model: 'sim-embed' }, 400, 'invalid_input'],
    ['null input', { model: 'sim-embed', input: null }, 400, 'invalid_input'],
    ['empty string', { model: 'sim-embed', input: '' }, 400, 'invalid_input'],
    ['empty array', { model: 'sim-embed', input: [] }, 400, 'invalid_input'],
    ['empty string in array', { model: 'sim-embed', input: ['ok', ''] }, 400, 'invalid_input'],
    ['token ids', { model: 'sim-embed', input: [1234, 5678] }, 400, 'invalid_input'],
    ['nested token ids', { model: 'sim-embed', input: [[1234, 5678]] }, 400, 'invalid_input'],
    ['nested strings', { model: 'sim-embed', input: [['a', 'b']] }, 400, 'invalid_input'],
    ['null in array', { model: 'sim-embed', input: ['a', null] }, 400, 'invalid_input'],
    ['object input', { model: 'sim-embed', input: { text: 'a' } }, 400, 'invalid_input'],
    ['number input', { model: 'sim-embed', input: 42 }, 400, 'invalid_input'],
    ['boolean input', { model: 'sim-embed', input: true }, 400, 'invalid_input'],
    ['bad encoding_format', { model: 'sim-embed', input: 'x', encoding_format: 'int8' }, 400, 'invalid_input'],
    ['encoding_format a number', { model: 'sim-embed', input: 'x', encoding_format: 1 }, 400, 'invalid_input'],
    ['dimensions 0', { model: 'sim-embed', input: 'x', dimensions: 0 }, 400, 'invalid_input'],
    ['dimensions fractional', { model: 'sim-embed', input: 'x', dimensions: 1.5 }, 400, 'invalid_input'],
    ['dimensions a string', { model: 'sim-embed', input: 'x', dimensions: '64' }, 400, 'invalid_input'],
    ['dimensions over native', { model: 'sim-embed', input: 'x', dimensions: 257 }, 400, 'invalid_input'],
    ['dimensions on a model without support', { model: 'sim-embed-fixed', input: 'x', dimensions: 32 }, 400, 'invalid_input'],
    ['user a number', { model: 'sim-embed', input: 'x', user: 5 }, 400, 'invalid_input'],
    ['unknown field', { model: 'sim-embed', input: 'x', foo: 1 }, 400, 'unknown_field'],
    ['Cohere field', { model: 'sim-embed', input: 'x', input_type: 'search_query' }, 400, 'unknown_field'],
    ['unknown field beside a bad input', { model: 'sim-embed', input: null, truncate: 'END' }, 400, 'unknown_field'],
    ['batch over max', { model: 'sim-embed', input: Array.from({ length: 65 }, (_, i) => `t${i}`) }, 400, 'batch_too_large'],
    ['huge array', { model: 'sim-embed', input: Array.from({ length: 100_000 }, () => 'a') }, 400, 'batch_too_large'],
    ['string over the token limit', { model: 'sim-embed', input: 'word '.repeat(600) }, 400, 'input_too_long'],
    ['one array item over the token limit', { model: 'sim-embed', input: ['short', 'word '.repeat(513)] }, 400, 'input_too_long'],
    ['one token over on the small model', { model: 'sim-embed-fixed', input: 'word '.repeat(65).trim() }, 400, 'input_too_long'],
    ['unicode over the token limit', { model: 'sim-embed', input: '日本語🚀'.repeat(400) }, 400, 'input_too_long'],
    ['one long run of a letter', { model: 'sim-embed', input: 'x'.repeat(60_000) }, 400, 'input_too_long'],
  ];
  for (const [name, json, status, code] of invalid) {
    it(`rejects ${name}: ${status} ${code}, nothing sent upstream or billed`, async () => {
      const r = await embed(json);
      await expectRejected(r, status, code);
      expect(env().sim.log.entries).to.have.length(0);
    });
  }

  it('rejects a 2 MiB + 1 byte body while reading (413 payload_too_large); exactly 2 MiB is read', async () => {
    const over = await call('POST', '/v1/embeddings', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: bodyOfSize(MiB2 + 1, 'sim-embed', 'input') });
    await expectRejected(over, 413, 'payload_too_large');
    const at = await call('POST', '/v1/embeddings', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: bodyOfSize(MiB2, 'sim-embed', 'input') });
    await expectRejected(at, 400, 'input_too_long'); // read whole, then refused by the model's limit
  });

  it('rejects a chunked body over 2 MiB without a content-length while reading it', async () => {
    const head = Buffer.from('{"model":"sim-embed","input":"');
    const r = await streamUntilAnswered('/v1/embeddings', { ...keyHeader(o.key), 'content-type': 'application/json' }, head, MiB2 + 64 * 1024 * 1024);
    await expectRejected(r, 413, 'payload_too_large');
    // answered once the cap was crossed and long before the body ended: refused while reading
    expect(r.sentWhenAnswered).to.be.above(MiB2).and.below(r.total);
  });

  it('answers malformed JSON, a non-JSON type and a wrong method with their codes', async () => {
    const bad = await call('POST', '/v1/embeddings', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: '{"model":"sim-embed","input":' });
    await expectRejected(bad, 400, 'invalid_json');
    const text = await call('POST', '/v1/embeddings', { headers: { ...keyHeader(o.key), 'content-type': 'text/plain' }, raw: 'hello' });
    await expectRejected(text, 415, 'unsupported_media_type');
    for (const path of ['/v1/embeddings', '/v1/rerank']) {
      const notObject = await call('POST', path, { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: '[{"model":"sim-embed","input":"x"}]' });
      await expectRejected(notObject, 400, 'invalid_request');
    }
    expect(env().sim.log.entries).to.have.length(0);
    const get = await call('GET', '/v1/embeddings', { headers: keyHeader(o.key) });
    expect(get.status).to.equal(405);
    const noKey = await call('POST', '/v1/embeddings', { json: { model: 'sim-embed', input: 'x' } });
    expect(noKey.status).to.equal(401);
  });

  it('works under the deprecated path authentication', async () => {
    const r = await call('POST', `/a/${o.key}/v1/embeddings`, { json: { model: 'sim-embed', input: 'path auth' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('deprecation')).to.equal('true');
    const rr = await call('POST', `/a/${o.key}/v1/rerank`, { json: { model: 'sim-rerank', query: 'path', documents: ['path auth'] } });
    expect(rr.status, rr.text).to.equal(200);
  });

  // OpenAI: "dimensions: the number of dimensions the resulting output embeddings should have"; an
  // upstream that ignores it must not hand the caller vectors of another length, billed
  it('an upstream that answers vectors of another length than the dimensions asked is a 502 upstream_error, nothing billed', async () => {
    const up = await ScriptedUpstream.start('openai');
    try {
      const model = await up.model({ capabilities: { embeddings: true }, prices: { input_token: 1 }, limits: { dimensions: 8, supports_dimensions: true } });
      const vector = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
      up.otherwise = () => ({ kind: 'json', body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: vector }], model: 'up-model', usage: { prompt_tokens: 2, total_tokens: 2 } } });
      const full = await embed({ model, input: 'a b' });
      expect(full.status, full.text).to.equal(200);
      expect(full.body.data[0].embedding).to.deep.equal(vector);
      const short = await embed({ model, input: 'a b', dimensions: 4 });
      await expectRejected(short, 502, 'upstream_error');
      expect(short.body.error.message).to.include('8 dimensions where 4 were asked');
      expect((up.received.at(-1)!.body as { dimensions: number }).dimensions).to.equal(4);
    } finally {
      await up.close();
    }
  });

  it('maps upstream failures and bills nothing for them', async () => {
    env().sim.knobs.set('sim-embed-1', { status: 500 });
    await expectRejected(await embed({ model: 'sim-embed', input: 'x' }), 502, 'upstream_error');
    env().sim.knobs.set('sim-embed-1', { malformed: true });
    await expectRejected(await embed({ model: 'sim-embed', input: 'x' }), 502, 'upstream_error');
    env().sim.knobs.set('sim-embed-1', { status: 429, retryAfter: 0 });
    const limited = await embed({ model: 'sim-embed', input: 'x' });
    await expectRejected(limited, 429, 'upstream_rate_limited');
    expect(limited.headers.get('retry-after')).to.be.a('string');
    env().sim.knobs.set('sim-embed-1', { status: 503, statusTimes: 1, retryAfter: 0 });
    const retried = await embed({ model: 'sim-embed', input: 'x' });
    expect(retried.status, retried.text).to.equal(200);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: retried.headers.get('x-service-request-id')! } })).to.equal(1);
  });
});
