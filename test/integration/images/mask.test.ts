import crypto from 'crypto';
import { expect } from 'chai';
import sharp from 'sharp';
import OpenAI, { toFile } from 'openai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { filesAddedSince, maskOf, pngOf, storedFiles, usageFor } from '../../helpers/images';
import { expectErrorEnvelope } from '../../helpers/errors';
import { Image, Model } from '../../../shared/db/models';
import { importCatalog } from '../../../shared/catalog/catalog-ops';
import { DEFAULT_CATALOG } from '../../../shared/catalog/default-catalog';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { config } from '../../../shared/config/env';
import { poolModel, simDeployment } from '../../helpers/pool-models';

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

const edits = () => env().sim.log.entries.filter((e) => e.path === '/v1/images/edits');

/** OpenAI's `mask` on image edits (CreateImageEditRequest): checked at the edge, sent upstream as its multipart part. */
describe('image edits: mask', () => {
  const s = openaiOrg();
  before(async () => {
    const simImage = DEFAULT_CATALOG.find((m) => m.publicId === 'sim-image')!;
    await importCatalog(env().redis, {
      providers: [
        { name: 'mask-azure', kind: 'azure', base_url: env().simUrl, api_key: 'azure-mask-key-0123', api_version: '2024-10-21' },
        { name: 'mask-gemini', kind: 'gemini', base_url: env().simUrl, api_key: 'gm-mask-key' },
      ],
      models: [
        { id: 'mask-az-image', provider: 'mask-azure', upstream: 'image-dep', capabilities: { image_generation: true }, limits: simImage.limits, prices: simImage.prices },
        { id: 'mask-gm-image', provider: 'mask-gemini', upstream: 'imagen-sim', capabilities: { image_generation: true }, limits: simImage.limits, prices: simImage.prices },
      ],
    });
  });
  after(async () => {
    // later files pick the first image model of the catalog: leave it as it was
    await Model.update({ enabled: false }, { where: { publicId: ['mask-az-image', 'mask-gm-image'] } });
    await bumpEpoch(env().redis);
  });

  it("the openai client's images.edit({ image, mask, prompt }) reaches the upstream with the mask, billed once, the mask file not kept", async () => {
    const image = await pngOf(64, 48);
    const mask = await maskOf(64, 48);
    const before = await Image.count({ where: { orgId: s.o.org.id } });
    const stored = await storedFiles();
    const { data, response } = await s.c.images
      .edit({ model: 'sim-image', image: await toFile(image, 'photo.png', { type: 'image/png' }), mask: await toFile(mask, 'mask.png', { type: 'image/png' }), prompt: 'a window', size: '256x256' as never })
      .withResponse();
    expect(data.data).to.have.length(1);
    const [sent] = edits();
    expect(sent.files!.map((f) => [f.field, f.sha256]), 'the image and the mask, byte for byte').to.deep.equal([
      ['image', sha256(image)],
      ['mask', sha256(mask)],
    ]);
    expect(sent.files![1].contentType).to.equal('image/png');
    expect((await usageFor(response.headers.get('x-service-request-id')))!.units).to.deep.equal({ image_256x256: 1, cost_micros: 8_000 });
    // the image upload and the edit's result stay; the mask served this edit only
    expect(await Image.count({ where: { orgId: s.o.org.id } })).to.equal(before + 2);
    expect(await filesAddedSince(stored)).to.have.length(2);
  });

  it('applies to the first of several images: its size is the one the mask must have', async () => {
    const files = async () => [await toFile(await pngOf(64, 64), 'a.png', { type: 'image/png' }), await toFile(await pngOf(80, 40, [1, 2, 3]), 'b.png', { type: 'image/png' })];
    const ok = await s.c.images.edit({ model: 'sim-image', image: await files(), mask: await toFile(await maskOf(64, 64), 'm.png', { type: 'image/png' }), prompt: 'combine', size: '256x256' as never });
    expect(ok.data).to.have.length(1);
    expect(edits()[0].files!.map((f) => f.field)).to.deep.equal(['image[]', 'image[]', 'mask']);
    const err = await s.c.images
      .edit({ model: 'sim-image', image: await files(), mask: await toFile(await maskOf(80, 40), 'm.png', { type: 'image/png' }), prompt: 'combine', size: '256x256' as never })
      .catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect([e.code, e.param]).to.deep.equal(['invalid_mask_image_format', 'mask']);
    expect(e.message).to.match(/mask size does not match image size/);
    expect(edits(), 'only the first edit reached the upstream').to.have.length(1);
  });

  it('refuses a mask that is not a PNG, has no alpha, has another size, is corrupt, twice, text or too large: 400 naming mask, nothing kept, billed or sent', async () => {
    const image = await pngOf(32, 32);
    const before = await Image.count({ where: { orgId: s.o.org.id } });
    const stored = await storedFiles();
    const send = async (fill: (f: FormData) => void | Promise<void>, status: number, code: string, message?: RegExp) => {
      const form = new FormData();
      form.append('model', 'sim-image');
      form.append('prompt', 'x');
      form.append('image', new Blob([image], { type: 'image/png' }), 'p.png');
      await fill(form);
      const res = await fetch(`${env().gw.url}/v1/images/edits`, { method: 'POST', headers: keyHeader(s.o.key), body: form });
      const text = await res.text();
      expect(res.status, text).to.equal(status);
      expectErrorEnvelope(text, code);
      expect(JSON.parse(text).error.param, text).to.equal('mask');
      if (message) expect(JSON.parse(text).error.message, text).to.match(message);
      expect(await usageFor(res.headers.get('x-service-request-id'))).to.equal(null);
    };
    const mask = (f: FormData, bytes: Buffer, type = 'image/png') => f.append('mask', new Blob([bytes], { type }), 'm.png');
    const jpeg = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#000' } }).jpeg().toBuffer();
    const webpAlpha = await sharp(await maskOf(32, 32)).webp().toBuffer();
    await send((f) => mask(f, jpeg, 'image/jpeg'), 400, 'invalid_mask_image_format', /must be a PNG/);
    await send((f) => mask(f, webpAlpha, 'image/webp'), 400, 'invalid_mask_image_format', /must be a PNG/);
    await send((f) => mask(f, Buffer.from('not an image at all')), 400, 'invalid_mask_image_format', /must be a PNG/);
    await send((f) => mask(f, image), 400, 'invalid_mask_image_format', /^Invalid mask image format - mask image missing alpha channel/);
    await send(async (f) => mask(f, await maskOf(32, 33)), 400, 'invalid_mask_image_format', /mask size does not match image size/);
    const good = await maskOf(32, 32);
    await send((f) => mask(f, good.subarray(0, 40)), 400, 'invalid_image');
    await send((f) => {
      mask(f, good);
      mask(f, good);
    }, 400, 'invalid_request');
    await send((f) => f.append('mask', 'a text field'), 400, 'invalid_request');
    await send((f) => mask(f, Buffer.concat([good, Buffer.alloc(config().imageUploadMaxBytes)])), 413, 'image_too_large');
    expect(await Image.count({ where: { orgId: s.o.org.id } }), 'no upload kept').to.equal(before);
    expect(await filesAddedSince(stored), 'no file kept').to.deep.equal([]);
    expect(edits(), 'the upstream was not called').to.have.length(0);
  });

  it('JSON edits name a stored mask with mask_id (an upload); it reaches the upstream, and is checked like a file', async () => {
    const upload = async (bytes: Buffer) => {
      const r = await call('POST', '/v1/images/uploads', { headers: keyHeader(s.o.key), json: { b64_json: bytes.toString('base64') } });
      expect(r.status, r.text).to.equal(201);
      return r.body.id as string;
    };
    const image = await upload(await pngOf(40, 40));
    const maskBytes = await maskOf(40, 40);
    const maskId = await upload(maskBytes);
    const r = await call('POST', '/v1/images/edits', { headers: keyHeader(s.o.key), json: { model: 'sim-image', prompt: 'a door', image_ids: [image], mask_id: maskId, size: '256x256' } });
    expect(r.status, r.text).to.equal(200);
    expect(edits()[0].files!.find((f) => f.field === 'mask')?.sha256).to.equal(sha256(maskBytes));
    expect(await Image.findByPk(maskId), 'a named mask is the caller\'s upload, kept').not.to.equal(null);
    expect((await Image.findByPk(r.body.data[0].id))!.sourceImageIds).to.deep.equal([image]);
    const other = await buildOrg(env().redis);
    const theirs = await call('POST', '/v1/images/uploads', { headers: keyHeader(other.key), json: { b64_json: maskBytes.toString('base64') } });
    const refused: Array<[Record<string, unknown>, number, string, string | null]> = [
      [{ mask_id: await upload(await pngOf(40, 40)) }, 400, 'invalid_mask_image_format', 'mask'],
      [{ mask_id: await upload(await maskOf(20, 40)) }, 400, 'invalid_mask_image_format', 'mask'],
      [{ mask_id: theirs.body.id }, 404, 'image_not_found', null], // as for an image id: not found, never 403
      [{ mask: maskId }, 400, 'invalid_request', 'mask'],
      [{ mask: { image_id: maskId } }, 400, 'invalid_request', 'mask.image_id'], // OpenAI's ImageRefParam has file_id and image_url only
    ];
    for (const [extra, status, code, param] of refused) {
      const res = await call('POST', '/v1/images/edits', { headers: keyHeader(s.o.key), json: { model: 'sim-image', prompt: 'x', image_id: image, size: '256x256', ...extra } });
      expect([res.status, res.body.error.code, res.body.error.param], JSON.stringify(extra)).to.deep.equal([status, code, param]);
      expect(await usageFor(res.headers.get('x-service-request-id'))).to.equal(null);
    }
    expect(edits(), 'the refused ones sent nothing').to.have.length(1);
  });

  it("a mixed pool's masked edits go to its OpenAI-kind deployment only", async () => {
    const oa = simDeployment('oa');
    const model = await poolModel([oa, { name: 'az', provider: 'mask-azure', upstream: 'image-dep' }], { capabilities: { image_generation: true }, limits: { max_edit_images: 1 } });
    try {
      for (let i = 0; i < 4; i++) {
        const r = await s.c.images.edit({ model, image: await toFile(await pngOf(32, 32), 'p.png', { type: 'image/png' }), mask: await toFile(await maskOf(32, 32), 'm.png', { type: 'image/png' }), prompt: `pooled ${i}` });
        expect(r.data).to.have.length(1);
      }
      const sent = env().sim.log.entries;
      expect(sent.map((e) => [e.path, e.model, e.files!.map((f) => f.field)])).to.deep.equal(Array.from({ length: 4 }, () => ['/v1/images/edits', oa.upstream, ['image', 'mask']]));
    } finally {
      await Model.destroy({ where: { publicId: model } });
      await bumpEpoch(env().redis);
    }
  });

  it('is checked before the lane: an org with no images lane gets the mask refusal, and 429 only for a good mask', async () => {
    const full = await buildOrg(env().redis, { laneOverrides: { 'images:interactive': 0 } });
    const edit = async (mask: Buffer) => {
      const form = new FormData();
      form.append('model', 'sim-image');
      form.append('prompt', 'x');
      form.append('image', new Blob([await pngOf(32, 32)], { type: 'image/png' }), 'p.png');
      form.append('mask', new Blob([mask], { type: 'image/png' }), 'm.png');
      const res = await fetch(`${env().gw.url}/v1/images/edits`, { method: 'POST', headers: keyHeader(full.key), body: form });
      return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
    };
    expect(await edit(await maskOf(16, 16))).to.deep.equal([400, 'invalid_mask_image_format']);
    expect(await edit(await maskOf(32, 32))).to.deep.equal([429, 'image_lanes_exhausted']);
    expect(edits()).to.have.length(0);
  });

  it('refuses any edit, masked or not, on models whose upstream kind has no edits (Azure, Gemini): 400 naming the model, before any lane, storage, upstream or billing', async () => {
    // an org with no images lane at all: a 429 would mean the lane was reached first
    const noLane = await buildOrg(env().redis, { laneOverrides: { 'images:interactive': 0 } });
    const upload = await call('POST', '/v1/images/uploads', { headers: keyHeader(s.o.key), json: { b64_json: (await pngOf(32, 32)).toString('base64') } });
    const stored = await storedFiles();
    for (const key of [s.o.key, noLane.key]) {
      for (const model of ['mask-az-image', 'mask-gm-image']) {
        const orgId = key === s.o.key ? s.o.org.id : noLane.org.id;
        const before = await Image.count({ where: { orgId } });
        const answers: Array<{ status: number; text: string; requestId: string | null }> = [];
        for (const withMask of [false, true]) {
          const form = new FormData();
          form.append('model', model);
          form.append('prompt', 'x');
          form.append('image', new Blob([await pngOf(32, 32)], { type: 'image/png' }), 'p.png');
          if (withMask) form.append('mask', new Blob([await maskOf(32, 32)], { type: 'image/png' }), 'm.png');
          const res = await fetch(`${env().gw.url}/v1/images/edits`, { method: 'POST', headers: keyHeader(key), body: form });
          answers.push({ status: res.status, text: await res.text(), requestId: res.headers.get('x-service-request-id') });
        }
        if (key === s.o.key) {
          const json = await call('POST', '/v1/images/edits', { headers: keyHeader(key), json: { model, prompt: 'x', image_id: upload.body.id } });
          answers.push({ status: json.status, text: json.text, requestId: json.headers.get('x-service-request-id') });
        }
        for (const a of answers) {
          expect(a.status, `${model}: ${a.text}`).to.equal(400);
          expectErrorEnvelope(a.text, 'invalid_request');
          const err = JSON.parse(a.text).error;
          expect([err.param, err.type]).to.deep.equal(['model', 'invalid_request_error']);
          expect(err.message).to.include(model);
          expect(await usageFor(a.requestId), 'nothing billed').to.equal(null);
        }
        expect(await Image.count({ where: { orgId } }), 'no file kept').to.equal(before);
      }
    }
    expect(await filesAddedSince(stored), 'no bytes stored').to.have.length(0);
    expect(env().sim.log.entries, 'no upstream called').to.have.length(0);
    // GET /v1/images/models says which models edit
    const listed = await call('GET', '/v1/images/models', { headers: keyHeader(s.o.key) });
    const editing = Object.fromEntries(listed.body.data.map((m: { id: string; edits: boolean }) => [m.id, m.edits]));
    expect([editing['sim-image'], editing['mask-az-image'], editing['mask-gm-image']]).to.deep.equal([true, false, false]);
  });
});
