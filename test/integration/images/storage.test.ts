import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { followImageUrl, pngOf, realImage } from '../../helpers/images';
import { Image } from '../../../shared/db/models';
import { shiftImageClock, IMAGE_RETENTION_MS } from '../../../shared/images/clock';
import { expireImages } from '../../../workers/cron/expire-images';
import { CLOCK_TASKS } from '../../../workers/cron/clock';
import { config } from '../../../shared/config/env';
import { expectErrorEnvelope } from '../../helpers/errors';

const DAY = 24 * 3600 * 1000;

async function generate(o: TestOrg): Promise<{ id: string; url: string }> {
  const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'kept', size: '256x256' } });
  expect(r.status, r.text).to.equal(200);
  return r.body.data[0];
}

async function signedLocation(o: TestOrg, id: string): Promise<URL> {
  const r = await fetch(`${env().gw.url}/v1/images/${id}/content`, { headers: keyHeader(o.key), redirect: 'manual' });
  expect(r.status).to.equal(302);
  expect(r.headers.get('cache-control')).to.equal('no-store');
  return new URL(r.headers.get('location')!);
}

describe('stored images: metadata, signed content, ownership, expiry', () => {
  let o: TestOrg;
  let other: TestOrg;
  beforeEach(resetSim);
  afterEach(() => shiftImageClock(0));
  before(async () => {
    o = await buildOrg(env().redis);
    other = await buildOrg(env().redis);
  });

  it('serves the documented metadata record', async () => {
    const img = await generate(o);
    const r = await call('GET', `/v1/images/${img.id}`, { headers: keyHeader(o.key) });
    expect(r.status).to.equal(200);
    expect(Object.keys(r.body).sort()).to.deep.equal(
      ['id', 'object', 'created_at', 'expires_at', 'source', 'model', 'width', 'height', 'size', 'format', 'content_type', 'bytes', 'source_image_ids', 'seed', 'url'].sort(),
    );
    // the metadata's url is the stable address; the answer's is the same, signed for an hour
    expect(r.body).to.include({ id: img.id, object: 'image', source: 'generation', model: 'sim-image', width: 256, height: 256, format: 'png', url: img.url.split('?')[0] });
    expect(r.body.expires_at - r.body.created_at).to.equal(IMAGE_RETENTION_MS / 1000);
  });

  it("answers 404 image_not_found for another org's image on metadata and content (not 403)", async () => {
    const img = await generate(o);
    for (const p of [`/v1/images/${img.id}`, `/v1/images/${img.id}/content`]) {
      const r = await call('GET', p, { headers: keyHeader(other.key) });
      expect(r.status, p).to.equal(404);
      expect(r.body.error.code).to.equal('image_not_found');
    }
    const r = await call('GET', '/v1/images/img_nope', { headers: keyHeader(o.key) });
    expect(r.status).to.equal(404);
  });

  it('answers 404 not_found on unknown image sub-paths (variations, a name that is no image id), as on any unknown path', async () => {
    const img = await generate(o);
    const unknown = await call('POST', '/v1/not-a-route', { headers: keyHeader(o.key), json: {} });
    expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'not_found']);
    for (const [method, p] of [['POST', '/v1/images/variations'], ['GET', '/v1/images/variations'], ['DELETE', '/v1/images/img_nope'], ['POST', '/v1/images/variations/content'], ['GET', '/v1/images/nope/content']]) {
      const r = await call(method, p, { headers: keyHeader(o.key), json: method === 'GET' ? undefined : {} });
      expect([r.status, r.body.error.code], `${method} ${p}: ${r.text}`).to.deep.equal([404, 'not_found']);
      expect(r.headers.get('allow'), `${method} ${p}`).to.equal(null);
    }
    // the SDK's createVariation gets the same 404
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const err = await client.images.createVariation({ model: 'sim-image', image: await toFile(await pngOf(64, 64), 'a.png', { type: 'image/png' }) }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).to.equal('not_found');
    // a real image id's paths are known: a wrong method is 405 with Allow, an unknown id image_not_found
    const wrong = await call('POST', `/v1/images/${img.id}`, { headers: keyHeader(o.key), json: {} });
    expect([wrong.status, wrong.body.error.code, wrong.headers.get('allow')]).to.deep.equal([405, 'method_not_allowed', 'GET, HEAD']);
    const gone = await call('GET', `/v1/images/img_${'0'.repeat(24)}/content`, { headers: keyHeader(o.key) });
    expect([gone.status, gone.body.error.code]).to.deep.equal([404, 'image_not_found']);
  });

  it('answers a malformed percent-encoded image id with 400 invalid_request, never a 500', async () => {
    for (const p of ['/v1/images/%E0%A4%A', '/v1/images/%E0%A4%A/content', '/v1/images/%ZZ/content', '/v1/images/%E0%A4%A/bytes?expires=1&signature=x']) {
      const r = await call('GET', p, { headers: keyHeader(o.key) });
      expect(r.status, `${p}: ${r.text}`).to.equal(400);
      expectErrorEnvelope(r.text, 'invalid_request');
    }
  });

  it('needs an API key for metadata and the redirect, but not for the signed bytes', async () => {
    const img = await generate(o);
    expect((await call('GET', `/v1/images/${img.id}`)).status).to.equal(401);
    expect((await call('GET', `/v1/images/${img.id}/content`)).status).to.equal(401);
    const loc = await signedLocation(o, img.id);
    expect(loc.pathname).to.equal(`/v1/images/${img.id}/bytes`);
    const ttl = Number(loc.searchParams.get('expires')) - Math.floor(Date.now() / 1000);
    expect(ttl).to.be.within(config().imageUrlTtlSeconds - 5, config().imageUrlTtlSeconds);
    const bytes = await fetch(loc);
    expect(bytes.status).to.equal(200);
    expect(bytes.headers.get('content-type')).to.equal('image/png');
    expect(Number(bytes.headers.get('content-length'))).to.be.greaterThan(100);
  });

  it('refuses tampered signatures with 403 invalid_signature', async () => {
    const img = await generate(o);
    const other2 = await generate(o);
    const loc = await signedLocation(o, img.id);
    const sig = loc.searchParams.get('signature')!;
    const expires = loc.searchParams.get('expires')!;
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    const variants = [
      `/v1/images/${img.id}/bytes?expires=${expires}&signature=${flip(sig)}`,
      `/v1/images/${img.id}/bytes?expires=${Number(expires) + 3600}&signature=${sig}`,
      `/v1/images/${other2.id}/bytes?expires=${expires}&signature=${sig}`,
      `/v1/images/${img.id}/bytes?expires=${expires}`,
      `/v1/images/${img.id}/bytes?signature=${sig}`,
      `/v1/images/${img.id}/bytes?expires=abc&signature=${sig}`,
      `/v1/images/${img.id}/bytes?expires=${expires}&signature=${sig}x`,
    ];
    for (const v of variants) {
      const r = await call('GET', v);
      expect(r.status, v).to.equal(403);
      expect(r.body.error.code, v).to.equal('invalid_signature');
    }
    expect((await fetch(loc)).status).to.equal(200);
  });

  it("an answer's url opens without a key for an hour, as OpenAI's; after that only with a key (302, the image's 7 days)", async () => {
    const img = await generate(o);
    const url = new URL(img.url);
    expect(url.pathname).to.equal(`/v1/images/${img.id}/content`);
    expect(Number(url.searchParams.get('expires')) - Math.floor(Date.now() / 1000)).to.be.within(3590, 3600);
    const open = await fetch(img.url); // no key, as `requests.get(response.data[0].url)` does
    expect(open.status).to.equal(200);
    expect(open.headers.get('content-type')).to.equal('image/png');
    expect((await realImage(Buffer.from(await open.arrayBuffer()))).width).to.equal(256);
    // the signature names this image and this expiry only
    const other = await generate(o);
    for (const v of [`/v1/images/${other.id}/content${url.search}`, `${url.pathname}?expires=${Number(url.searchParams.get('expires')) + 60}&signature=${url.searchParams.get('signature')}`]) {
      const r = await call('GET', v);
      expect([r.status, r.body.error?.code], v).to.deep.equal([403, 'invalid_signature']);
    }
    shiftImageClock(3601 * 1000);
    const late = await call('GET', `${url.pathname}${url.search}`);
    expect([late.status, late.body.error?.code]).to.deep.equal([403, 'signature_expired']);
    const keyed = await followImageUrl(img.url, o.key); // with a key: the stable address, as before
    expect((await realImage(keyed.bytes)).width).to.equal(256);
    expect((await call('GET', url.pathname)).status, 'no key, no signature').to.equal(401);
  });

  it('refuses a signed URL after its expiry with 403 signature_expired (controllable clock)', async () => {
    const img = await generate(o);
    const loc = await signedLocation(o, img.id);
    shiftImageClock((config().imageUrlTtlSeconds + 1) * 1000);
    const r = await call('GET', `${loc.pathname}${loc.search}`);
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('signature_expired');
    // a fresh redirect still works while the image is stored
    const again = await followImageUrl(img.url, o.key);
    expect((await realImage(again.bytes)).width).to.equal(256);
  });

  it('stops resolving an image 7 days after creation, before the sweep, and the clock task deletes bytes and rows', async () => {
    const img = await generate(o);
    const row = (await Image.findByPk(img.id))!;
    const file = path.resolve(config().imageStorageDir, row.storageKey);
    expect(fs.existsSync(file)).to.equal(true);
    const loc = await signedLocation(o, img.id);

    shiftImageClock(7 * DAY - 60_000); // one minute before expiry: still served
    expect((await call('GET', `/v1/images/${img.id}`, { headers: keyHeader(o.key) })).status).to.equal(200);

    shiftImageClock(7 * DAY + 1000);
    for (const p of [`/v1/images/${img.id}`, `/v1/images/${img.id}/content`]) {
      const r = await call('GET', p, { headers: keyHeader(o.key) });
      expect(r.status, p).to.equal(404);
      expect(r.body.error.code).to.equal('image_not_found');
    }
    const edit = await call('POST', '/v1/images/edits', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'p', image_id: img.id } });
    expect(edit.status).to.equal(404);
    expect(await Image.findByPk(img.id), 'not swept yet').to.not.equal(null);
    // an old signed URL for an expired image does not serve the bytes either
    const old = await call('GET', `${loc.pathname}${loc.search}`);
    expect([old.status, old.body.error.code]).to.deep.equal([403, 'signature_expired']);

    const task = CLOCK_TASKS.find((t) => t.name === 'expire-images');
    expect(task, 'the clock runs expire-images').to.not.equal(undefined);
    const removed = await expireImages(Date.now() + 7 * DAY + 1000);
    expect(removed).to.be.at.least(1);
    expect(await Image.findByPk(img.id)).to.equal(null);
    expect(fs.existsSync(file)).to.equal(false);
  });

  it('keeps images that have not expired when the sweep runs', async () => {
    const img = await generate(o);
    await expireImages(Date.now() + DAY);
    expect(await Image.findByPk(img.id)).to.not.equal(null);
    expect((await call('GET', `/v1/images/${img.id}`, { headers: keyHeader(o.key) })).status).to.equal(200);
  });

  it('answers 404 on the signed route when the bytes are gone', async () => {
    const img = await generate(o);
    const loc = await signedLocation(o, img.id);
    const row = (await Image.findByPk(img.id))!;
    fs.rmSync(path.resolve(config().imageStorageDir, row.storageKey));
    const r = await call('GET', `${loc.pathname}${loc.search}`);
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('image_not_found');
  });
});
