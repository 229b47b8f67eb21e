import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { filesAddedSince, followImageUrl, realImage, storedFiles, usageFor } from '../../helpers/images';
import { expectErrorEnvelope } from '../../helpers/errors';
import { waitFor } from '../../helpers/wait';
import { Image, UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { leasesFreed } from '../../helpers/leases';

describe('POST /v1/images/generations', () => {
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  for (const [format, size] of [
    ['png', '512x768'],
    ['jpeg', '256x256'],
    ['webp', '768x512'],
  ] as const) {
    it(`works with the openai client; the URL followed as a browser would yields a real ${format} of ${size}`, async () => {
      const { data, response } = await client.images
        .generate({ model: 'sim-image', prompt: 'a lighthouse at dusk', size: size as never, output_format: format, n: 1 })
        .withResponse();
      const requestId = response.headers.get('x-service-request-id');
      expect(data.data).to.have.length(1);
      const item = data.data![0] as OpenAI.Images.Image & { id: string; expires_at: number };
      expect(item.id).to.match(/^img_[0-9a-f]{24}$/);
      expect(item.url!.startsWith(`${env().gw.url}/v1/images/${item.id}/content?expires=`), item.url).to.equal(true);
      expect(item.b64_json).to.equal(undefined);
      expect(item.expires_at - data.created).to.equal(7 * 24 * 3600);
      const got = await followImageUrl(item.url!, o.key);
      expect(got.contentType).to.equal(`image/${format}`);
      const [w, h] = size.split('x').map(Number);
      expect(await realImage(got.bytes)).to.deep.equal({ format, width: w, height: h });
      // the upstream got the upstream model name and the caller's parameters
      const sent = env().sim.log.entries[0];
      expect(sent.path).to.equal('/v1/images/generations');
      expect(sent.model).to.equal('sim-image-1');
      expect(sent.body).to.include({ size, output_format: format, response_format: 'b64_json' });
      // one usage event, priced by model and size
      const ev = await usageFor(requestId);
      expect(ev!.modality).to.equal('image');
      expect(ev!.model).to.equal('sim-image');
      expect(ev!.lane).to.equal('interactive');
      const price = { '512x768': 14_000, '256x256': 8_000, '768x512': 14_000 }[size];
      expect(ev!.units).to.deep.equal({ [`image_${size}`]: 1, cost_micros: price });
    });
  }

  it('returns n images with b64_json when asked, one usage event for the request, and stores each', async () => {
    const r = await call('POST', '/v1/images/generations', {
      headers: keyHeader(o.key),
      json: { model: 'sim-image', prompt: 'three cats', size: '256x256', n: 3, response_format: 'b64_json', steps: 10, guidance: 3.5, negative_prompt: 'dogs', seed: 42 },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal('sim-image');
    expect(r.body.size).to.equal('256x256');
    expect(r.body.output_format).to.equal('png');
    expect(r.body.data).to.have.length(3);
    const ids = r.body.data.map((d: { id: string }) => d.id);
    expect(new Set(ids).size).to.equal(3);
    for (const d of r.body.data) {
      expect(await realImage(Buffer.from(d.b64_json, 'base64'))).to.deep.equal({ format: 'png', width: 256, height: 256 });
      const followed = await followImageUrl(d.url, o.key);
      expect(followed.bytes.toString('base64')).to.equal(d.b64_json);
    }
    expect(env().sim.log.entries[0].body).to.include({ steps: 10, guidance: 3.5, negative_prompt: 'dogs', seed: 42, n: 3 });
    const requestId = r.headers.get('x-service-request-id')!;
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId } })).to.equal(1);
    expect((await usageFor(requestId))!.units).to.deep.equal({ image_256x256: 3, cost_micros: 24_000 });
    const rows = await Image.findAll({ where: { requestId } });
    expect(rows.map((x) => x.id).sort()).to.deep.equal([...ids].sort());
    expect(rows.every((x) => x.seed === 42 && x.source === 'generation' && x.orgId === o.org.id)).to.equal(true);
  });

  it('draws deterministically from prompt and seed', async () => {
    const gen = async (prompt: string, seed: number) => {
      const r = await call('POST', '/v1/images/generations', {
        headers: keyHeader(o.key),
        json: { model: 'sim-image', prompt, seed, size: '256x256', response_format: 'b64_json' },
      });
      expect(r.status, r.text).to.equal(200);
      return r.body.data[0].b64_json as string;
    };
    const a = await gen('a red fox', 7);
    expect(await gen('a red fox', 7)).to.equal(a);
    expect(await gen('a red fox', 8)).to.not.equal(a);
    expect(await gen('a blue fox', 7)).to.not.equal(a);
  });

  it('uses the default size and format of the model when none is given', async () => {
    const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'default' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.size).to.equal('1024x1024');
    const got = await followImageUrl(r.body.data[0].url, o.key);
    expect(await realImage(got.bytes)).to.deep.equal({ format: 'png', width: 1024, height: 1024 });
  });

  it('runs a -background request on the background lane for an entitled org, interactive otherwise', async () => {
    const pro = await buildOrg(env().redis, { plan: 'pro' });
    const free = await buildOrg(env().redis, { plan: 'free' });
    for (const [org, lane] of [
      [pro, 'background'],
      [free, 'interactive'],
    ] as const) {
      const r = await call('POST', '/v1/images/generations', { headers: keyHeader(org.key), json: { model: 'sim-image-background', prompt: 'later', size: '256x256' } });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.model).to.equal('sim-image-background');
      const ev = await usageFor(r.headers.get('x-service-request-id'));
      expect(ev!.lane).to.equal(lane);
      expect(ev!.model).to.equal('sim-image-background');
    }
  });

  it('answers 429 image_lanes_exhausted at the org lane count, bills nothing for it, and releases the lease', async () => {
    const small = await buildOrg(env().redis, { laneOverrides: { 'images:interactive': 1 } });
    env().sim.knobs.set('sim-image-1', { hold: true }); // the first request answers when released
    const body = { model: 'sim-image', prompt: 'slow', size: '256x256' };
    const first = call('POST', '/v1/images/generations', { headers: keyHeader(small.key), json: body });
    expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000), 'the first request is upstream').to.equal(true);
    expect(await env().gw.ctx.leases.count(small.org.id, 'images', 'interactive'), 'and holds the lane').to.equal(1);
    const second = await call('POST', '/v1/images/generations', { headers: keyHeader(small.key), json: body });
    expect(second.status).to.equal(429);
    expect(second.body.error.code).to.equal('image_lanes_exhausted');
    expect(Number(second.headers.get('retry-after'))).to.be.at.least(1);
    expect(await usageFor(second.headers.get('x-service-request-id'))).to.equal(null);
    env().sim.knobs.release();
    expect((await first).status).to.equal(200);
    expect(await leasesFreed(env().gw.ctx.leases, small.org.id, 'images', 'interactive')).to.equal(true);
  });

  it('answers 502 upstream_error when the upstream fails, storing and billing nothing', async () => {
    env().sim.knobs.set('sim-image-1', { status: 500 });
    const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'x', size: '256x256' } });
    expect(r.status).to.equal(502);
    expect(r.body.error.code).to.equal('upstream_error');
    const requestId = r.headers.get('x-service-request-id')!;
    expect(await usageFor(requestId)).to.equal(null);
    expect(await Image.count({ where: { requestId } })).to.equal(0);
  });

  it('answers 502 when the upstream sends a malformed body, storing and billing nothing', async () => {
    env().sim.knobs.set('sim-image-1', { malformed: true });
    const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'x', size: '256x256' } });
    expect(r.status, r.text).to.equal(502);
    expect(r.body.error.code).to.equal('upstream_error');
    const requestId = r.headers.get('x-service-request-id')!;
    expect(await usageFor(requestId)).to.equal(null);
    expect(await Image.count({ where: { requestId } })).to.equal(0);
  });

  for (const [n, from] of [[1, 0], [3, 2]] as const) {
    it(`answers 502 when image ${from + 1} of ${n} the upstream sends is not an image, keeping no image or file and billing nothing`, async () => {
      env().sim.knobs.set('sim-image-1', { nonImageFrom: from });
      const files = await storedFiles();
      const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'x', size: '256x256', n } });
      expect(r.status, r.text).to.equal(502);
      expectErrorEnvelope(r.text, 'upstream_error');
      expect(r.body.error.message).to.match(/not a PNG, JPEG or WebP image/); // the bytes were read, not the JSON refused
      const requestId = r.headers.get('x-service-request-id')!;
      expect(await usageFor(requestId)).to.equal(null);
      expect(await Image.count({ where: { requestId } }), 'image rows').to.equal(0);
      expect(await filesAddedSince(files), 'stored files').to.deep.equal([]);
    });
  }

  it('answers 503 upstream_unavailable when the upstream keeps answering 503, storing and billing nothing', async () => {
    env().sim.knobs.set('sim-image-1', { status: 503, retryAfter: 0 });
    const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'x', size: '256x256' } });
    expect(r.status, r.text).to.equal(503);
    expect(r.body.error.code).to.equal('upstream_unavailable');
    expect(r.headers.get('retry-after'), 'a retryable 503').to.be.a('string');
    const requestId = r.headers.get('x-service-request-id')!;
    expect(await usageFor(requestId)).to.equal(null);
    expect(await Image.count({ where: { requestId } })).to.equal(0);
  });

  it('lists image models with their limits, prices and the org policy', async () => {
    const r = await call('GET', '/v1/images/models', { headers: keyHeader(o.key) });
    expect(r.status).to.equal(200);
    expect(r.body.policy).to.equal('on');
    expect(r.body.available).to.equal(true);
    const ids = r.body.data.map((m: { id: string }) => m.id);
    expect(ids).to.deep.equal(['sim-image']);
    const m = r.body.data[0];
    expect(m.limits.sizes).to.include('1024x1024');
    expect(m.limits.steps).to.deep.equal({ min: 1, max: 50, default: 20 });
    expect(m.limits.output_formats).to.deep.equal(['png', 'jpeg', 'webp']);
    expect(m.limits.max_n).to.equal(4);
    expect(m.prices.image_512x512).to.equal(12_000);
  });
});
