import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { pngOf, usageFor } from '../../helpers/images';
import { waitFor } from '../../helpers/wait';
import { setSwitch } from '../../../shared/switches/switches';
import { Image, Model } from '../../../shared/db/models';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { expectErrorEnvelope } from '../../helpers/errors';

const ok = { model: 'sim-image', prompt: 'a valid prompt', size: '256x256' };

describe('image requests: validation, kill switch and org policy', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  /** Sends, checks status and code, and that nothing reached the upstream, was stored or billed. */
  async function refused(path: string, json: unknown, status: number, code: string, key = o.key) {
    const r = await call('POST', path, { headers: keyHeader(key), json });
    expect(r.status, `${JSON.stringify(json)} → ${r.text}`).to.equal(status);
    expectErrorEnvelope(r.text, code);
    const requestId = r.headers.get('x-service-request-id')!;
    expect(requestId).to.match(/^req_/);
    expect(await usageFor(requestId)).to.equal(null);
    expect(await Image.count({ where: { requestId } })).to.equal(0);
    expect(env().sim.log.entries, 'the upstream was not called').to.have.length(0);
    return r;
  }

  it('refuses every invalid generation with its status and code, billing nothing', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ prompt: 'x' }, 400, 'invalid_request'],
      [{ model: 'sim-image' }, 400, 'invalid_request'],
      [{ ...ok, prompt: '' }, 400, 'invalid_request'],
      [{ ...ok, prompt: 42 }, 400, 'invalid_request'],
      [{ ...ok, size: 'big' }, 400, 'invalid_request'],
      [{ ...ok, size: '300x300' }, 400, 'unsupported_size'],
      [{ ...ok, size: '4096x4096' }, 400, 'unsupported_size'],
      [{ ...ok, steps: 0 }, 400, 'invalid_steps'],
      [{ ...ok, steps: 51 }, 400, 'invalid_steps'],
      [{ ...ok, steps: 2.5 }, 400, 'invalid_request'],
      [{ ...ok, steps: '20' }, 400, 'invalid_request'],
      [{ ...ok, guidance: -1 }, 400, 'invalid_guidance'],
      [{ ...ok, guidance: 20.5 }, 400, 'invalid_guidance'],
      [{ ...ok, output_format: 'gif' }, 400, 'unsupported_output_format'],
      [{ ...ok, n: 5 }, 400, 'invalid_n'],
      [{ ...ok, n: 0 }, 400, 'invalid_n'],
      [{ ...ok, n: 1.5 }, 400, 'invalid_request'],
      [{ ...ok, seed: -1 }, 400, 'invalid_request'],
      [{ ...ok, seed: 2 ** 33 }, 400, 'invalid_request'],
      [{ ...ok, response_format: 'file' }, 400, 'invalid_request'],
      [{ ...ok, prompt: 'x'.repeat(4001) }, 400, 'prompt_too_long'],
      [{ ...ok, negative_prompt: 'x'.repeat(2001) }, 400, 'prompt_too_long'],
      [{ ...ok, stream: true }, 400, 'unsupported_parameter'],
      [{ ...ok, partial_images: 2 }, 400, 'unsupported_parameter'],
      [{ ...ok, colour: 'red' }, 400, 'unknown_field'],
      [{ ...ok, model: 'nope' }, 404, 'model_not_found'],
      [{ ...ok, model: 'sim-chat' }, 400, 'model_not_image_capable'],
      [{ ...ok, model: 'sim-chat-background' }, 400, 'model_not_image_capable'],
    ];
    for (const [json, status, code] of cases) await refused('/v1/images/generations', json, status, code);
  });

  it('refuses every invalid JSON edit with its status and code, before touching the stored images, billing nothing', async () => {
    const mine = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: ok });
    expect(mine.status, mine.text).to.equal(200);
    const id = mine.body.data[0].id as string;
    resetSim();
    const edit = { model: 'sim-image', prompt: 'edit it', image_id: id };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...edit, model: 'nope' }, 404, 'model_not_found'],
      [{ ...edit, model: 'sim-decide' }, 400, 'model_not_image_capable'],
      [{ ...edit, model: 'sim-embed' }, 400, 'model_not_image_capable'],
      [{ ...edit, strength: 0.5 }, 400, 'unknown_field'],
      [{ ...edit, stream: true }, 400, 'unsupported_parameter'],
      [{ ...edit, prompt: '' }, 400, 'invalid_request'],
      [{ ...edit, image_id: 42 }, 400, 'invalid_request'],
      [{ ...edit, steps: 99 }, 400, 'invalid_steps'],
      [{ ...edit, output_format: 'bmp' }, 400, 'unsupported_output_format'],
      [{ ...edit, n: 9 }, 400, 'invalid_n'],
      [{ ...edit, prompt: 'x'.repeat(4001) }, 400, 'prompt_too_long'],
    ];
    for (const [json, status, code] of cases) await refused('/v1/images/edits', json, status, code);
    // CreateImageEditRequest has no moderation, no style and no hd quality (they are generation fields)
    for (const [json, code, param] of [
      [{ ...edit, moderation: 'low' }, 'unknown_field', 'moderation'],
      [{ ...edit, style: 'vivid' }, 'unknown_field', 'style'],
      [{ ...edit, quality: 'hd' }, 'invalid_request', 'quality'],
      // no image named at all: the missing field is named, as a missing prompt is (multipart: images/edits.test.ts)
      [{ model: 'sim-image', prompt: 'edit it' }, 'invalid_request', 'image_ids'],
      [{ model: 'sim-image', prompt: 'edit it', image_ids: null }, 'invalid_request', 'image_ids'],
    ] as Array<[Record<string, unknown>, string, string]>) {
      expect((await refused('/v1/images/edits', json, 400, code)).body.error.param).to.equal(param);
    }
  });

  it("refuses values outside OpenAI's enums (quality, style, background, moderation) and a transparent JPEG, naming the field, before any upstream call", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...ok, quality: 'ultra' }, 'quality'],
      [{ ...ok, quality: 42 }, 'quality'],
      [{ ...ok, style: 'cartoon' }, 'style'],
      [{ ...ok, background: 'pink' }, 'background'],
      [{ ...ok, moderation: 'none' }, 'moderation'],
      [{ ...ok, background: 'transparent', output_format: 'jpeg' }, 'background'],
    ];
    for (const [json, param] of cases) {
      const r = await refused('/v1/images/generations', json, 400, 'invalid_request');
      expect([r.body.error.type, r.body.error.param], r.text).to.deep.equal(['invalid_request_error', param]);
    }
    // every value OpenAI's document lists still goes through, as given
    const fine = { ...ok, quality: 'high', style: 'natural', background: 'transparent', moderation: 'low', output_format: 'webp' };
    const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: fine });
    expect(r.status, r.text).to.equal(200);
    expect(env().sim.log.entries[0].body).to.include({ quality: 'high', style: 'natural', background: 'transparent', moderation: 'low', output_format: 'webp' });
  });

  it("names the field at fault in error.param for the model-limit refusals, unknown and unsupported fields", async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ ...ok, size: '300x300' }, 'unsupported_size', 'size'],
      [{ ...ok, n: 5 }, 'invalid_n', 'n'],
      [{ ...ok, output_format: 'gif' }, 'unsupported_output_format', 'output_format'],
      [{ ...ok, prompt: 'x'.repeat(4001) }, 'prompt_too_long', 'prompt'],
      [{ ...ok, negative_prompt: 'x'.repeat(2001) }, 'prompt_too_long', 'negative_prompt'],
      [{ ...ok, steps: 51 }, 'invalid_steps', 'steps'],
      [{ ...ok, guidance: 20.5 }, 'invalid_guidance', 'guidance'],
      [{ ...ok, stream: true }, 'unsupported_parameter', 'stream'],
      [{ ...ok, partial_images: 2 }, 'unsupported_parameter', 'partial_images'],
      [{ ...ok, colour: 'red' }, 'unknown_field', 'colour'],
      // names of Object's own members are fields like any other (a lookup by them was a 500)
      [{ ...ok, constructor: 0 }, 'unknown_field', 'constructor'],
      [{ ...ok, toString: 'x' }, 'unknown_field', 'toString'],
      // a model of another capability is a refusal of `model`, as /v1/embeddings names it
      [{ ...ok, model: 'sim-chat' }, 'model_not_image_capable', 'model'],
    ];
    for (const [json, code, param] of cases) {
      const r = await refused('/v1/images/generations', json, 400, code);
      expect(r.body.error.param, r.text).to.equal(param);
    }
    const proto = await call('POST', '/v1/images/generations', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: '{"model":"sim-image","prompt":"p","size":"256x256","__proto__":0}' });
    expect(proto.status, proto.text).to.equal(400);
  });

  it('takes null fields (OpenAI types every optional image field nullable) and stream: false as not given, through the SDK too', async () => {
    const nulls = { ...ok, n: null, quality: null, style: null, background: null, moderation: null, output_format: null, output_compression: null, response_format: null, partial_images: null, stream: null };
    const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: nulls });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data).to.have.length(1);
    expect(r.body.output_format).to.equal('png');
    const sent = env().sim.log.entries[0].body as Record<string, unknown>;
    for (const k of ['quality', 'style', 'background', 'moderation', 'output_compression', 'stream', 'partial_images']) expect(sent, k).not.to.have.property(k);
    resetSim();
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const sdk = await client.images.generate({ model: 'sim-image', prompt: 'a valid prompt', size: '256x256' as never, stream: false, partial_images: 0, n: null, quality: null });
    expect(sdk.data).to.have.length(1);
    const edit = await call('POST', '/v1/images/edits', { headers: keyHeader(o.key), json: { ...ok, image_id: (sdk.data![0] as unknown as { id: string }).id, stream: false, n: null } });
    expect(edit.status, edit.text).to.equal(200);
    // multipart: the SDK sends stream=false as the text 'false'
    const form = await client.images.edit({ model: 'sim-image', prompt: 'edit it', size: '256x256' as never, image: await toFile(await pngOf(64, 64), 'in.png', { type: 'image/png' }), stream: false });
    expect(form.data).to.have.length(1);
    // a null for a required field is still its absence: 400 naming it
    resetSim();
    const noPrompt = await refused('/v1/images/generations', { ...ok, prompt: null }, 400, 'invalid_request');
    expect(noPrompt.body.error.param).to.equal('prompt');
  });

  it("refuses steps and guidance on a model that publishes no range for them (400 unsupported_parameter)", async () => {
    await upsertModel({ id: 'test-image-plain', provider: 'simulator', upstream: 'sim-image-1', capabilities: { image_generation: true }, limits: { sizes: ['256x256'], max_n: 1 }, prices: { image: 1000 } });
    await bumpEpoch(env().redis);
    try {
      const plain = { model: 'test-image-plain', prompt: 'plain', size: '256x256' };
      await refused('/v1/images/generations', { ...plain, steps: 10 }, 400, 'unsupported_parameter');
      await refused('/v1/images/generations', { ...plain, guidance: 3 }, 400, 'unsupported_parameter');
      const fine = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: plain });
      expect(fine.status, fine.text).to.equal(200);
    } finally {
      await Model.destroy({ where: { publicId: 'test-image-plain' } });
      await bumpEpoch(env().redis);
    }
  });

  it('refuses bodies that are not JSON objects', async () => {
    const h = keyHeader(o.key);
    const notJson = await call('POST', '/v1/images/generations', { headers: { ...h, 'content-type': 'text/plain' }, raw: 'draw' });
    expect([notJson.status, notJson.body.error.code]).to.deep.equal([415, 'unsupported_media_type']);
    const broken = await call('POST', '/v1/images/generations', { headers: { ...h, 'content-type': 'application/json' }, raw: '{"model":' });
    expect([broken.status, broken.body.error.code]).to.deep.equal([400, 'invalid_json']);
    const array = await call('POST', '/v1/images/generations', { headers: h, json: [ok] });
    expect([array.status, array.body.error.code]).to.deep.equal([400, 'invalid_request']);
    for (const r of [notJson, broken, array]) {
      expect(r.text).not.to.match(/\bat .+\.(js|ts):\d+/);
      expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
    }
    const wrongMethod = await call('GET', '/v1/images/generations', { headers: h });
    expect([wrongMethod.status, wrongMethod.headers.get('allow')]).to.deep.equal([405, 'POST']);
  });

  it('answers 503 image_generation_disabled on every image-making route while the operator switch is engaged; routes stay registered', async () => {
    const id = (await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: ok })).body.data[0].id as string;
    resetSim();
    await setSwitch(env().redis, 'image_generation', true);
    try {
      await waitFor(() => env().gw.ctx.switches.engaged('image_generation'), 3000);
      const g = await refused('/v1/images/generations', ok, 503, 'image_generation_disabled');
      expect(Number(g.headers.get('retry-after'))).to.be.at.least(1);
      await refused('/v1/images/edits', { ...ok, image_id: id }, 503, 'image_generation_disabled');
      await refused('/v1/images/uploads', { b64_json: (await pngOf(8, 8)).toString('base64') }, 503, 'image_generation_disabled');
      // even an invalid body: the switch answers first
      await refused('/v1/images/generations', { nonsense: true }, 503, 'image_generation_disabled');
      const listing = await call('GET', '/v1/images/models', { headers: keyHeader(o.key) });
      expect(listing.status).to.equal(200);
      expect(listing.body.available).to.equal(false);
      // stored images stay readable
      expect((await call('GET', `/v1/images/${id}`, { headers: keyHeader(o.key) })).status).to.equal(200);
    } finally {
      await setSwitch(env().redis, 'image_generation', false);
    }
    await waitFor(() => !env().gw.ctx.switches.engaged('image_generation'), 3000);
    const back = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: ok });
    expect(back.status).to.equal(200);
  });

  it("answers 503 image_generation_disabled when the org's image_generation policy is off", async () => {
    const off = await buildOrg(env().redis, { policies: { image_generation: 'off' } });
    const g = await refused('/v1/images/generations', ok, 503, 'image_generation_disabled', off.key);
    expect(Number(g.headers.get('retry-after')), 'a retryable 503 carries Retry-After').to.be.at.least(1);
    await refused('/v1/images/edits', { ...ok, image_id: 'img_000000000000000000000000' }, 503, 'image_generation_disabled', off.key);
    await refused('/v1/images/uploads', { b64_json: 'AAAA' }, 503, 'image_generation_disabled', off.key);
    const listing = await call('GET', '/v1/images/models', { headers: keyHeader(off.key) });
    expect(listing.body.policy).to.equal('off');
    expect(listing.body.data[0].policy).to.equal('off');
    // a plan that turns it off, and an org override that turns it back on
    const planOff = await buildOrg(env().redis, { entitlements: { policies: { image_generation: 'off' } } as never });
    await refused('/v1/images/generations', ok, 503, 'image_generation_disabled', planOff.key);
    const overridden = await buildOrg(env().redis, { entitlements: { policies: { image_generation: 'off' } } as never, policies: { image_generation: 'on' } });
    expect((await call('POST', '/v1/images/generations', { headers: keyHeader(overridden.key), json: ok })).status).to.equal(200);
  });

  it('needs an API key', async () => {
    const r = await call('POST', '/v1/images/generations', { json: ok });
    expect([r.status, r.body.error.code]).to.deep.equal([401, 'INVALID_API_KEY']);
  });
});
