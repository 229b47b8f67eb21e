import crypto from 'crypto';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { filesAddedSince, maskOf, pngOf, storedFiles, usageFor } from '../../helpers/images';
import { expectErrorEnvelope } from '../../helpers/errors';
import { startImageHost, type ImageHost } from '../../helpers/https-images';
import { Image } from '../../../shared/db/models';

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const dataUrl = (b: Buffer) => `data:image/png;base64,${b.toString('base64')}`;

const edits = () => env().sim.log.entries.filter((e) => e.path === '/v1/images/edits');

/**
 * OpenAI's JSON edit body (the openapi.json's EditImageBodyJsonParam): `images`, an array of
 * ImageRefParam (`{file_id}` or `{image_url}`, exactly one), and `mask`, one ImageRefParam.
 */
describe("image edits: OpenAI's JSON form (images and mask references)", () => {
  const s = openaiOrg();
  let host: ImageHost;
  before(async () => {
    host = await startImageHost();
  });
  after(async () => host.close());

  const upload = async (bytes: Buffer, key = s.o.key) => {
    const r = await call('POST', '/v1/images/uploads', { headers: keyHeader(key), json: { b64_json: bytes.toString('base64') } });
    expect(r.status, r.text).to.equal(201);
    return r.body.id as string;
  };
  const edit = (json: Record<string, unknown>, key = s.o.key) => call('POST', '/v1/images/edits', { headers: keyHeader(key), json: { model: 'sim-image', prompt: 'a door', size: '256x256', ...json } });

  it("takes images: [{file_id}] and mask: {file_id} naming stored images, as OpenAI's documented example sends them", async () => {
    const imageBytes = await pngOf(40, 40);
    const maskBytes = await maskOf(40, 40);
    const image = await upload(imageBytes);
    const mask = await upload(maskBytes);
    const r = await edit({ images: [{ file_id: image }], mask: { file_id: mask }, output_format: 'png' });
    expect(r.status, r.text).to.equal(200);
    const [sent] = edits();
    expect(sent.files!.map((f) => [f.field, f.sha256]), 'the image and the mask, byte for byte').to.deep.equal([
      ['image', sha256(imageBytes)],
      ['mask', sha256(maskBytes)],
    ]);
    expect((await Image.findByPk(r.body.data[0].id))!.sourceImageIds).to.deep.equal([image]);
    expect(await Image.findByPk(mask), 'a stored mask is kept').not.to.equal(null);
    expect((await usageFor(r.headers.get('x-service-request-id')))!.units).to.deep.equal({ image_256x256: 1, cost_micros: 8_000 });
  });

  it('takes image_url references (a data URL, an https URL through the SSRF guard) beside file_ids, in their order; a mask URL serves the edit only', async () => {
    const first = await pngOf(120, 90, [10, 20, 30]);
    const stored = await pngOf(120, 90);
    const storedId = await upload(stored);
    const before = await Image.count({ where: { orgId: s.o.org.id } });
    const files = await storedFiles();
    const r = await edit({
      images: [{ image_url: dataUrl(first) }, { file_id: storedId }, { image_url: `${host.url()}/cat.png` }],
      mask: { image_url: dataUrl(await maskOf(120, 90)) },
    });
    expect(r.status, r.text).to.equal(200);
    const cat = await pngOf(120, 90); // what the host serves at /cat.png
    expect(edits()[0].files!.map((f) => [f.field, f.sha256])).to.deep.equal([
      ['image[]', sha256(first)],
      ['image[]', sha256(stored)],
      ['image[]', sha256(cat)],
      ['mask', sha256(await maskOf(120, 90))],
    ]);
    const sources = (await Image.findByPk(r.body.data[0].id))!.sourceImageIds;
    expect(sources).to.have.length(3);
    expect(sources[1]).to.equal(storedId);
    // the two fetched images are kept as the org's uploads (as multipart files are), and the result; the mask is not
    expect(await Image.count({ where: { orgId: s.o.org.id } })).to.equal(before + 3);
    expect(await filesAddedSince(files)).to.have.length(3);
    expect(host.hits.some((h) => h.endsWith('/cat.png'))).to.equal(true);
  });

  it("refuses another org's or an unknown file_id as it refuses image ids (404 image_not_found), before anything is fetched, stored, sent or billed", async () => {
    const other = await buildOrg(env().redis);
    const theirs = await upload(await pngOf(40, 40), other.key);
    const theirMask = await upload(await maskOf(40, 40), other.key);
    const mine = await upload(await pngOf(40, 40));
    const hits = host.hits.length;
    const before = await Image.count({ where: { orgId: s.o.org.id } });
    for (const json of [
      { images: [{ file_id: theirs }] },
      { images: [{ file_id: 'file-abc123' }] },
      { images: [{ image_url: `${host.url()}/cat.png` }, { file_id: theirs }] },
      { images: [{ file_id: mine }], mask: { file_id: theirMask } },
      { images: [{ image_url: dataUrl(await pngOf(40, 40)) }], mask: { file_id: 'img_000000000000000000000000' } },
    ]) {
      const r = await edit(json);
      expect(r.status, r.text).to.equal(404);
      expectErrorEnvelope(r.text, 'image_not_found');
      expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
    }
    expect(host.hits.length, 'no URL fetched').to.equal(hits);
    expect(await Image.count({ where: { orgId: s.o.org.id } }), 'nothing stored').to.equal(before);
    expect(edits()).to.have.length(0);
  });

  it('refuses malformed references and bad URLs with 400 naming the field, deleting what it had stored for the edit', async () => {
    const mine = await upload(await pngOf(32, 32));
    const maskId = await upload(await maskOf(32, 32));
    const before = await Image.count({ where: { orgId: s.o.org.id } });
    const files = await storedFiles();
    const good = dataUrl(await pngOf(32, 32));
    const refused: Array<[Record<string, unknown>, number, string, string | null]> = [
      [{ images: [{ file_id: mine, image_url: good }] }, 400, 'invalid_request', 'images[0]'],
      [{ images: [{}] }, 400, 'invalid_request', 'images[0]'],
      [{ images: [{ file_id: mine, detail: 'high' }] }, 400, 'invalid_request', 'images[0].detail'],
      [{ images: [] }, 400, 'invalid_request', 'images'],
      [{ images: mine }, 400, 'invalid_request', 'images'],
      [{ images: [{ file_id: mine }], image_ids: [mine] }, 400, 'invalid_request', null],
      [{ images: Array.from({ length: 5 }, () => ({ file_id: mine })) }, 400, 'unsupported_parameter', 'images'],
      [{ images: [{ file_id: mine }], mask: { file_id: maskId }, mask_id: maskId }, 400, 'invalid_request', 'mask'],
      [{ images: [{ file_id: mine }], mask: { image_url: good, file_id: maskId } }, 400, 'invalid_request', 'mask'],
      [{ images: [{ file_id: mine }], mask: maskId }, 400, 'invalid_request', 'mask'],
      [{ images: [{ image_url: `https://127.0.0.1:${host.port}/cat.png` }] }, 400, 'url_not_allowed', 'images[0].image_url'],
      [{ images: [{ file_id: mine }, { image_url: `http://127.0.0.2:${host.port}/cat.png` }] }, 400, 'url_not_allowed', 'images[1].image_url'],
      [{ images: [{ image_url: `${host.url()}/fake.png` }] }, 400, 'unsupported_image_type', 'images[0].image_url'],
      [{ images: [{ image_url: 'data:text/plain;base64,aGVsbG8=' }] }, 400, 'invalid_request', 'images[0].image_url'],
      [{ images: [{ image_url: 'data:image/png;base64,@@@' }] }, 400, 'invalid_request', 'images[0].image_url'],
      // the first image stored from its URL, then the mask refused: the stored image is deleted again
      [{ images: [{ image_url: good }], mask: { image_url: good } }, 400, 'invalid_mask_image_format', 'mask'],
      [{ images: [{ image_url: good }], mask: { image_url: dataUrl(await maskOf(32, 31)) } }, 400, 'invalid_mask_image_format', 'mask'],
      [{ images: [{ image_url: good }], mask: { image_url: `https://localhost:${host.port}/cat.png` } }, 400, 'url_not_allowed', 'mask.image_url'],
    ];
    for (const [json, status, code, param] of refused) {
      const r = await edit(json);
      expect([r.status, r.body.error?.code, r.body.error?.param], `${JSON.stringify(json).slice(0, 200)}: ${r.text.slice(0, 300)}`).to.deep.equal([status, code, param]);
      expectErrorEnvelope(r.text, code);
      expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
    }
    expect(await Image.count({ where: { orgId: s.o.org.id } }), 'nothing kept').to.equal(before);
    expect(await filesAddedSince(files), 'no bytes kept').to.deep.equal([]);
    expect(edits(), 'nothing sent').to.have.length(0);
    // the references are OpenAI's JSON form: a multipart edit sends files
    const form = new FormData();
    form.append('model', 'sim-image');
    form.append('prompt', 'x');
    form.append('images', JSON.stringify([{ file_id: mine }]));
    const res = await fetch(`${env().gw.url}/v1/images/edits`, { method: 'POST', headers: keyHeader(s.o.key), body: form });
    const body = (await res.json()) as { error: { code: string; param: string } };
    expect([res.status, body.error.code, body.error.param]).to.deep.equal([400, 'invalid_request', 'images']);
  });
});
