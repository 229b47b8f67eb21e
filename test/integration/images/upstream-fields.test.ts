import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { followImageUrl, pngOf, realImage, usageFor } from '../../helpers/images';
import { expectErrorEnvelope } from '../../helpers/errors';
import { Image, Model } from '../../../shared/db/models';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { poolModel, simDeployment } from '../../helpers/pool-models';

const DALLE = 'test-image-dalle3';
const AUTO = 'test-image-auto';
/** Declared a GPT image upstream (`send_response_format: false`): it refuses `response_format` and answers base64. */
const GPT = 'test-image-gpt';

/** OpenAI's answer fields beyond the bytes (revised_prompt, usage, quality, background), and `size: "auto"`. */
describe('images: what the upstream answers besides the bytes, and size auto', () => {
  let o: TestOrg;
  let client: OpenAI;
  const gen = (json: Record<string, unknown>) => call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json });
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    // The simulator answers as OpenAI does for the upstream model's kind: dall-e-3 vs the GPT image kind.
    await upsertModel({ id: DALLE, provider: 'simulator', upstream: 'dall-e-3', capabilities: { image_generation: true }, limits: { sizes: ['256x256'], max_n: 2 }, prices: { image: 1000 } });
    await upsertModel({ id: AUTO, provider: 'simulator', upstream: 'gpt-image-sim', capabilities: { image_generation: true }, limits: { sizes: ['auto', '256x256'], default_size: 'auto' }, prices: { image: 1000 } });
    await upsertModel({ id: GPT, provider: 'simulator', upstream: 'gpt-image-sim', capabilities: { image_generation: true }, limits: { sizes: ['256x256'], max_n: 2, max_edit_images: 2 }, config: { image_config: { send_response_format: false } }, prices: { image: 1000 } });
    await bumpEpoch(env().redis);
  });
  after(async () => {
    await Model.destroy({ where: { publicId: [DALLE, AUTO, GPT] } }); // later files pick the first image model of the catalog
    await bumpEpoch(env().redis);
  });

  it('passes on the GPT image kind\'s usage, quality and background as the upstream sent them (generation and edit)', async () => {
    const prompt = 'a lighthouse at dusk';
    const r = await client.images.generate({ model: 'sim-image', prompt, size: '256x256' as never, quality: 'high', background: 'transparent' });
    expect(env().sim.log.entries[0].body).to.include({ quality: 'high', background: 'transparent' });
    expect([r.quality, r.background]).to.deep.equal(['high', 'transparent']);
    const input = Math.ceil(prompt.length / 4); // the simulator's count
    expect(r.usage).to.deep.equal({ input_tokens: input, output_tokens: 256, total_tokens: input + 256, input_tokens_details: { text_tokens: input, image_tokens: 0 } });
    expect(r.data![0]).not.to.have.property('revised_prompt');
    // Not an echo of the request: without quality or background, the upstream says what it used.
    const id = (r.data![0] as { id?: string }).id;
    const e = await call('POST', '/v1/images/edits', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'at night', image_id: id, size: '256x256', n: 2 } });
    expect(e.status, e.text).to.equal(200);
    expect([e.body.quality, e.body.background, e.body.usage.output_tokens]).to.deep.equal(['medium', 'opaque', 512]);
    // an edit's input_fidelity (CreateImageEditRequest) goes upstream; a value outside its enum, or on a generation, is refused
    const sent = env().sim.log.entries.length;
    const faithful = await call('POST', '/v1/images/edits', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'keep the face', image_id: id, size: '256x256', input_fidelity: 'high' } });
    expect(faithful.status, faithful.text).to.equal(200);
    expect(env().sim.log.entries[sent].body).to.include({ input_fidelity: 'high' });
    const bad = await call('POST', '/v1/images/edits', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'x', image_id: id, size: '256x256', input_fidelity: 'medium' } });
    expect([bad.status, bad.body.error.code, bad.body.error.param]).to.deep.equal([400, 'invalid_request', 'input_fidelity']);
    const onGeneration = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'x', size: '256x256', input_fidelity: 'high' } });
    expect([onGeneration.status, onGeneration.body.error.code]).to.deep.equal([400, 'unknown_field']);
    expect(env().sim.log.entries.length, 'the refused ones sent nothing').to.equal(sent + 1);
  });

  it('passes on dall-e-3\'s revised_prompt per image, and adds no field the upstream did not send', async () => {
    const r = await gen({ model: DALLE, prompt: 'two boats', n: 2, response_format: 'b64_json' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.map((d: { revised_prompt?: string }) => d.revised_prompt)).to.deep.equal(['A detailed picture (1 of 2) of two boats', 'A detailed picture (2 of 2) of two boats']);
    for (const d of r.body.data) expect(d.b64_json).to.be.a('string');
    for (const k of ['usage', 'quality', 'background']) expect(r.body, k).not.to.have.property(k);
  });

  it("refuses size 'auto' with unsupported_size when the model does not offer it, billing nothing", async () => {
    const r = await gen({ model: 'sim-image', prompt: 'x', size: 'auto' });
    expect(r.status, r.text).to.equal(400);
    expectErrorEnvelope(r.text, 'unsupported_size');
    expect(r.body.error.message).to.contain('256x256');
    const requestId = r.headers.get('x-service-request-id');
    expect(await usageFor(requestId)).to.equal(null);
    expect(await Image.count({ where: { requestId: requestId! } })).to.equal(0);
    expect(env().sim.log.entries).to.have.length(0);
    const bad = await gen({ model: AUTO, prompt: 'x', size: 'automatic' });
    expectErrorEnvelope(bad.text, 'invalid_request');
  });

  it("sends size 'auto' (asked, or the model's default) to a model that offers it and answers the real size", async () => {
    for (const json of [{ size: 'auto' }, {}]) {
      const { data, response } = await client.images.generate({ model: AUTO, prompt: 'a square', ...json }).withResponse();
      expect(env().sim.log.entries.at(-1)!.body).to.include({ size: 'auto' });
      expect(data.size).to.equal('1024x1024');
      const got = await followImageUrl(data.data![0].url!, o.key);
      expect(await realImage(got.bytes)).to.deep.equal({ format: 'png', width: 1024, height: 1024 });
      expect((await usageFor(response.headers.get('x-service-request-id')))!.units).to.deep.equal({ image: 1, cost_micros: 1000 });
    }
  });

  it('a GPT image model answers b64_json without being asked, as OpenAI\'s GPT image models always do (generation and multipart edit); url keeps it out', async () => {
    const g = await client.images.generate({ model: GPT, prompt: 'a kite', n: 2 });
    expect(env().sim.log.entries.at(-1)!.body, 'the upstream is not sent response_format').not.to.have.property('response_format');
    expect(g.data).to.have.length(2);
    for (const d of g.data!) {
      const stored = await followImageUrl(d.url!, o.key);
      expect(Buffer.from(d.b64_json!, 'base64').equals(stored.bytes), 'b64_json is the stored image').to.equal(true);
    }
    const png = await pngOf(256, 256);
    const e = await client.images.edit({ model: GPT, prompt: 'at night', image: [await toFile(png, 'a.png', { type: 'image/png' }), await toFile(png, 'b.png', { type: 'image/png' })] });
    expect(env().sim.log.entries.at(-1)!.body).not.to.have.property('response_format');
    expect(await realImage(Buffer.from(e.data![0].b64_json!, 'base64'))).to.deep.include({ width: 256, height: 256 });
    for (const d of e.data!) expect(d.url, 'the gateway adds its url').to.be.a('string');
    // any other image model keeps OpenAI's dall-e default: url only unless b64_json is asked for
    const dalle = await gen({ model: DALLE, prompt: 'a kite' });
    expect(dalle.body.data[0]).not.to.have.property('b64_json');
    const urlOnly = await gen({ model: DALLE, prompt: 'a kite', response_format: 'url' });
    expect([urlOnly.status, Object.keys(urlOnly.body.data[0]).includes('b64_json')]).to.deep.equal([200, false]);
  });

  it("the simulator refuses response_format on OpenAI's GPT image models as OpenAI does (400 unknown_parameter), and takes it on dall-e", async () => {
    const refusal = { error: { message: "Unknown parameter: 'response_format'.", type: 'invalid_request_error', param: 'response_format', code: 'unknown_parameter' } };
    for (const model of ['gpt-image-1', 'gpt-image-1-mini', 'gpt-image-1.5', 'chatgpt-image-latest']) {
      for (const response_format of ['b64_json', 'url']) {
        const r = await fetch(`${env().simUrl}/v1/images/generations`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-sim' }, body: JSON.stringify({ model, prompt: 'x', size: '256x256', response_format }) });
        expect([r.status, await r.json()], `${model} ${response_format}`).to.deep.equal([400, refusal]);
      }
    }
    const form = new FormData();
    for (const [k, v] of Object.entries({ model: 'gpt-image-1', prompt: 'x', size: '256x256', response_format: 'b64_json' })) form.append(k, v);
    form.append('image', new Blob([await pngOf(32, 32)], { type: 'image/png' }), 'a.png');
    const edit = await fetch(`${env().simUrl}/v1/images/edits`, { method: 'POST', headers: { authorization: 'Bearer sk-sim' }, body: form });
    expect([edit.status, await edit.json()], 'an edit too').to.deep.equal([400, refusal]);
    const ok = await fetch(`${env().simUrl}/v1/images/generations`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-sim' }, body: JSON.stringify({ model: 'gpt-image-1', prompt: 'x', size: '256x256' }) });
    expect(ok.status, 'without it').to.equal(200);
    const dalle = await fetch(`${env().simUrl}/v1/images/generations`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-sim' }, body: JSON.stringify({ model: 'dall-e-3', prompt: 'x', size: '256x256', response_format: 'b64_json' }) });
    expect(dalle.status, 'dall-e takes it').to.equal(200);
  });

  it("refuses a caller's response_format on a GPT image model as OpenAI does, naming it, before any lane, upstream or billing (generation and edit)", async () => {
    const png = await pngOf(256, 256);
    for (const response_format of ['url', 'b64_json']) {
      const g = await gen({ model: GPT, prompt: 'a kite', response_format });
      const form = new FormData();
      for (const [k, v] of Object.entries({ model: GPT, prompt: 'x', response_format })) form.append(k, v);
      form.append('image', new Blob([png], { type: 'image/png' }), 'a.png');
      const e = await fetch(`${env().gw.url}/v1/images/edits`, { method: 'POST', headers: keyHeader(o.key), body: form });
      for (const [status, text, requestId] of [[g.status, g.text, g.headers.get('x-service-request-id')], [e.status, await e.text(), e.headers.get('x-service-request-id')]] as const) {
        expect(status, text).to.equal(400);
        expectErrorEnvelope(text, 'unsupported_parameter');
        const err = JSON.parse(text).error;
        expect([err.type, err.param]).to.deep.equal(['invalid_request_error', 'response_format']);
        expect(err.message).to.include("Unknown parameter: 'response_format'.");
        expect(await usageFor(requestId)).to.equal(null);
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    // an openai client that sends the images API's null (the field not given) is served
    const nulled = await gen({ model: GPT, prompt: 'a kite', response_format: null });
    expect(nulled.status, nulled.text).to.equal(200);
    expect(nulled.body.data[0].b64_json).to.be.a('string');
  });

  it('never sends response_format to a deployment whose upstream is a GPT image model, declared or not (a pool of one, a mixed pool)', async () => {
    // AUTO's upstream is `gpt-image-sim`, not declared send_response_format: false: before, the gateway
    // sent its b64_json and every request was the upstream's 400 unknown_parameter
    const r = await gen({ model: AUTO, prompt: 'a kite', size: '256x256' });
    expect(r.status, r.text).to.equal(200);
    expect(env().sim.log.entries.at(-1)!.body).not.to.have.property('response_format');
    expect(r.body.data[0].b64_json, 'a GPT image model answers base64 unasked').to.be.a('string');
    const refused = await gen({ model: AUTO, prompt: 'a kite', size: '256x256', response_format: 'b64_json' });
    expect([refused.status, refused.body.error.code, refused.body.error.param]).to.deep.equal([400, 'unsupported_parameter', 'response_format']);
    // a pool of a dall-e and a GPT image deployment: each is sent what it takes
    const mixed = await poolModel([simDeployment('dall-e-2'), simDeployment('gpt-image-1')], { capabilities: { image_generation: true }, limits: { max_n: 1 } });
    try {
      resetSim();
      // weighted at random: 16 requests all on one side is a 1 in 32768 chance
      for (let i = 0; i < 16; i++) {
        const m = await gen({ model: mixed, prompt: `pooled ${i}`, response_format: 'b64_json' });
        expect(m.status, m.text).to.equal(200);
      }
      const sent = env().sim.log.entries.map((e) => `${String(e.model).replace(/-[0-9a-f]{8}$/, '')} ${String((e.body as Record<string, unknown>).response_format)}`);
      expect(sent).to.have.length(16);
      expect([...new Set(sent)].sort(), 'dall-e is sent b64_json, the GPT image deployment nothing').to.deep.equal(['dall-e-2 b64_json', 'gpt-image-1 undefined']);
    } finally {
      await Model.destroy({ where: { publicId: mixed } });
      await bumpEpoch(env().redis);
    }
  });
});
