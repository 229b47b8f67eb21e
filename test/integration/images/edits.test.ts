import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { filesAddedSince, followImageUrl, pngOf, realImage, storedFiles, usageFor } from '../../helpers/images';
import { Image } from '../../../shared/db/models';
import { expectErrorEnvelope } from '../../helpers/errors';
import { config } from '../../../shared/config/env';

async function generate(o: TestOrg, size = '256x256'): Promise<string> {
  const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'source', size } });
  expect(r.status, r.text).to.equal(200);
  return r.body.data[0].id;
}

describe('POST /v1/images/edits', () => {
  let o: TestOrg;
  let other: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    other = await buildOrg(env().redis);
  });

  it("works with the openai client's multipart edit; the result has the requested size and format", async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const file = await toFile(await pngOf(300, 200), 'photo.png', { type: 'image/png' });
    const { data, response } = await client.images
      .edit({ model: 'sim-image', image: file, prompt: 'make it sepia', size: '512x512' as never, output_format: 'webp' })
      .withResponse();
    const item = data.data![0] as OpenAI.Images.Image & { id: string };
    const got = await followImageUrl(item.url!, o.key);
    expect(await realImage(got.bytes)).to.deep.equal({ format: 'webp', width: 512, height: 512 });
    // the upstream received OpenAI's multipart form with the image
    const sent = env().sim.log.entries[0];
    expect(sent.path).to.equal('/v1/images/edits');
    expect(sent.body).to.include({ model: 'sim-image-1', prompt: 'make it sepia', size: '512x512', output_format: 'webp' });
    // the uploaded file became an upload image of the org, named as the edit's source
    const row = await Image.findByPk(item.id);
    expect(row!.source).to.equal('edit');
    expect(row!.sourceImageIds).to.have.length(1);
    const src = await Image.findByPk(row!.sourceImageIds[0]);
    expect(src!.source).to.equal('upload');
    expect(src!.orgId).to.equal(o.org.id);
    expect([src!.width, src!.height]).to.deep.equal([300, 200]);
    const ev = await usageFor(response.headers.get('x-service-request-id'));
    expect(ev!.units).to.deep.equal({ image_512x512: 1, cost_micros: 12_000 });
  });

  it('accepts several files as image[] from the openai client', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const files = [await toFile(await pngOf(64, 64), 'a.png', { type: 'image/png' }), await toFile(await pngOf(80, 40, [1, 2, 3]), 'b.png', { type: 'image/png' })];
    const res = await client.images.edit({ model: 'sim-image', image: files, prompt: 'combine', size: '256x256' as never, n: 2 });
    expect(res.data).to.have.length(2);
    const row = await Image.findByPk((res.data![0] as { id: string }).id);
    expect(row!.sourceImageIds).to.have.length(2);
  });

  it('deletes the uploaded files again when the edit fails, keeping nothing and billing nothing', async () => {
    env().sim.knobs.set('sim-image-1', { status: 500 });
    const client = new OpenAI({ apiKey: other.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const before = await Image.count({ where: { orgId: other.org.id } });
    const files = await storedFiles();
    const file = await toFile(await pngOf(64, 64), 'photo.png', { type: 'image/png' });
    const err = await client.images.edit({ model: 'sim-image', image: file, prompt: 'fails' }).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(502);
    expect(env().sim.log.entries, 'the upstream was called, and retried as a pool of one is (docs/routing.md)').to.have.length(config().poolMaxAttempts);
    expect(await Image.count({ where: { orgId: other.org.id } }), 'no upload kept').to.equal(before);
    expect(await filesAddedSince(files), 'no uploaded file kept').to.deep.equal([]);
    const requestId = (err as InstanceType<typeof OpenAI.APIError>).headers?.get?.('x-service-request-id') ?? null;
    expect(requestId).to.be.a('string');
    expect(await usageFor(requestId)).to.equal(null);
  });

  it("edits by prior image id of the caller's org (JSON) and reads the stored bytes", async () => {
    const id = await generate(o);
    const r = await call('POST', '/v1/images/edits', {
      headers: keyHeader(o.key),
      json: { model: 'sim-image', prompt: 'add snow', image_ids: [id], size: '512x768', output_format: 'jpeg', response_format: 'b64_json' },
    });
    expect(r.status, r.text).to.equal(200);
    expect(await realImage(Buffer.from(r.body.data[0].b64_json, 'base64'))).to.deep.equal({ format: 'jpeg', width: 512, height: 768 });
    const row = await Image.findByPk(r.body.data[0].id);
    expect(row!.sourceImageIds).to.deep.equal([id]);
    expect((await usageFor(r.headers.get('x-service-request-id')))!.units).to.deep.equal({ image_512x768: 1, cost_micros: 14_000 });
  });

  it("answers 404 image_not_found for another org's image id (not 403), calling no upstream and billing nothing", async () => {
    const theirs = await generate(other);
    resetSim();
    for (const json of [
      { model: 'sim-image', prompt: 'steal', image_ids: [theirs] },
      { model: 'sim-image', prompt: 'steal', image_id: theirs },
      { model: 'sim-image', prompt: 'nothing', image_ids: ['img_000000000000000000000000'] },
      { model: 'sim-image', prompt: 'garbage', image_ids: ['../../etc/passwd'] },
    ]) {
      const r = await call('POST', '/v1/images/edits', { headers: keyHeader(o.key), json });
      expect(r.status, r.text).to.equal(404);
      expect(r.body.error.code).to.equal('image_not_found');
      expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
    }
    expect(env().sim.log.entries).to.have.length(0);
    // and the owner still can
    const mine = await call('POST', '/v1/images/edits', { headers: keyHeader(other.key), json: { model: 'sim-image', prompt: 'ok', image_id: theirs, size: '256x256' } });
    expect(mine.status, mine.text).to.equal(200);
  });

  it('refuses edits without images, with too many, with a mask or with a non-image file', async () => {
    const id = await generate(o);
    const cases: Array<[unknown, number, string]> = [
      [{ model: 'sim-image', prompt: 'x' }, 400, 'invalid_request'],
      [{ model: 'sim-image', prompt: 'x', image_ids: [] }, 400, 'invalid_request'],
      [{ model: 'sim-image', prompt: 'x', image_ids: [id, id, id, id, id] }, 400, 'unsupported_parameter'],
      [{ model: 'sim-image', prompt: 'x', image_ids: [id], image_id: id }, 400, 'invalid_request'],
      // a JSON edit names a stored mask with mask_id; a `mask` there is refused, naming it
      [{ model: 'sim-image', prompt: 'x', image_ids: [id], mask: 'm' }, 400, 'invalid_request'],
      [{ model: 'sim-image', prompt: 'x', image_ids: [id], size: '300x300' }, 400, 'unsupported_size'],
      [{ model: 'sim-chat', prompt: 'x', image_ids: [id] }, 400, 'model_not_image_capable'],
    ];
    for (const [json, status, code] of cases) {
      const r = await call('POST', '/v1/images/edits', { headers: keyHeader(o.key), json });
      expect(r.status, JSON.stringify(json)).to.equal(status);
      expect(r.body.error.code, JSON.stringify(json)).to.equal(code);
      expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
    }
    const form = new FormData();
    form.append('model', 'sim-image');
    form.append('prompt', 'x');
    form.append('image', new Blob([Buffer.from('this is not an image at all')], { type: 'image/png' }), 'fake.png');
    const res = await fetch(`${env().gw.url}/v1/images/edits`, { method: 'POST', headers: keyHeader(o.key), body: form });
    const body = (await res.json()) as { error: { code: string } };
    expect(res.status).to.equal(400);
    expect(body.error.code).to.equal('unsupported_image_type');
    expect(await usageFor(res.headers.get('x-service-request-id'))).to.equal(null);
    expect(env().sim.log.entries.filter((e) => e.path === '/v1/images/edits')).to.have.length(0);
  });

  it('refuses bad multipart edits (stray file part, unknown field, mask, oversized or non-image second file, too many files), keeping no upload', async () => {
    const png = await pngOf(32, 32);
    const before = await Image.count({ where: { orgId: o.org.id } });
    const files = await storedFiles();
    // `param` names the part at fault by the name it was sent under, as OpenAI names `image` for a bad file
    const send = async (fill: (f: FormData) => void, status: number, code: string, param?: string) => {
      const form = new FormData();
      form.append('model', 'sim-image');
      form.append('prompt', 'x');
      fill(form);
      const res = await fetch(`${env().gw.url}/v1/images/edits`, { method: 'POST', headers: keyHeader(o.key), body: form });
      const text = await res.text();
      expect(res.status, text).to.equal(status);
      expectErrorEnvelope(text, code);
      if (param) expect(JSON.parse(text).error.param, text).to.equal(param);
      expect(await usageFor(res.headers.get('x-service-request-id'))).to.equal(null);
    };
    const file = (f: FormData, name = 'image', bytes: Buffer = png) => f.append(name, new Blob([bytes], { type: 'image/png' }), 'p.png');
    await send((f) => file(f, 'photo'), 400, 'unknown_field');
    await send(() => undefined, 400, 'invalid_request', 'image'); // no image at all
    await send((f) => {
      file(f);
      f.append('strength', '0.5');
    }, 400, 'unknown_field');
    // a mask without alpha: refused after the image was stored, which must be deleted again
    await send((f) => {
      file(f);
      file(f, 'mask');
    }, 400, 'invalid_mask_image_format', 'mask');
    // the first file is valid and stored before the second is refused: it must be deleted again
    await send((f) => {
      file(f, 'image[]');
      file(f, 'image[]', Buffer.from('not an image, just text'));
    }, 400, 'unsupported_image_type', 'image[]');
    await send((f) => file(f, 'image', png.subarray(0, 40)), 400, 'invalid_image', 'image');
    await send((f) => {
      file(f, 'image[]');
      file(f, 'image[]', Buffer.concat([png, Buffer.alloc(11 * 1024 * 1024)]));
    }, 413, 'image_too_large', 'image[]');
    await send((f) => {
      for (let i = 0; i < 5; i++) file(f, 'image[]');
    }, 400, 'unsupported_parameter');
    expect(await Image.count({ where: { orgId: o.org.id } }), 'no upload kept').to.equal(before);
    expect(await filesAddedSince(files), 'no uploaded file kept').to.deep.equal([]);
    expect(env().sim.log.entries.filter((e) => e.path === '/v1/images/edits'), 'the upstream was not called').to.have.length(0);
  });
});
