import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { followImageUrl, pngOf, realImage, usageFor } from '../../helpers/images';
import { startImageHost, type ImageHost } from '../../helpers/https-images';
import { Image } from '../../../shared/db/models';
import { expectErrorEnvelope } from '../../helpers/errors';
import { withSettings } from '../../helpers/settings';

describe('POST /v1/images/uploads', () => {
  let o: TestOrg;
  let host: ImageHost;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    host = await startImageHost();
  });
  after(() => host.close());

  const upload = (json: unknown) => call('POST', '/v1/images/uploads', { headers: keyHeader(o.key), json });
  const refused = async (json: unknown, status: number, code: string) => {
    const r = await upload(json);
    expect(r.status, `${JSON.stringify(json).slice(0, 120)}: ${r.text}`).to.equal(status);
    expectErrorEnvelope(r.text, code); // the code, and no stack trace
    expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
    expect(await Image.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(0);
    return r;
  };

  it('stores an https URL fetched through the guard and returns an id usable for editing', async () => {
    const r = await upload({ url: `${host.url()}/cat.png` });
    expect(r.status, r.text).to.equal(201);
    expect(r.body).to.include({ object: 'image', source: 'upload', width: 120, height: 90, size: '120x90', format: 'png', content_type: 'image/png', model: null });
    expect(r.body.id).to.match(/^img_/);
    expect(r.body.expires_at - r.body.created_at).to.equal(7 * 24 * 3600);
    const got = await followImageUrl(r.body.url, o.key);
    expect(await realImage(got.bytes)).to.deep.equal({ format: 'png', width: 120, height: 90 });
    expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null); // uploads are not billed
    const edit = await call('POST', '/v1/images/edits', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'p', image_id: r.body.id, size: '256x256' } });
    expect(edit.status, edit.text).to.equal(200);
  });

  it('follows a redirect to another allowed https URL, checking it again', async () => {
    const r = await upload({ url: `${host.url()}/redirect?to=/cat.png` });
    expect(r.status, r.text).to.equal(201);
    expect(host.hits.slice(-2).map((h) => h.split(' ')[1])).to.deep.equal(['/redirect', '/cat.png']);
  });

  it('stores bytes sent as b64_json (or a data URL) and as a multipart file', async () => {
    const png = await pngOf(40, 30);
    for (const b64 of [png.toString('base64'), `data:image/png;base64,${png.toString('base64')}`]) {
      const r = await upload({ b64_json: b64 });
      expect(r.status, r.text).to.equal(201);
      expect([r.body.width, r.body.height, r.body.bytes]).to.deep.equal([40, 30, png.length]);
    }
    const form = new FormData();
    form.append('file', new Blob([await pngOf(50, 20)], { type: 'application/octet-stream' }), 'x.bin');
    const res = await fetch(`${env().gw.url}/v1/images/uploads`, { method: 'POST', headers: keyHeader(o.key), body: form });
    const body = (await res.json()) as { width: number; format: string };
    expect(res.status).to.equal(201);
    expect(body).to.include({ width: 50, format: 'png' });
  });

  describe('the SSRF guard', () => {
    // a refusal of the one field `url`, named in error.param (OpenAI's ErrorResponse)
    const forbidden = async (url: string) => expect((await refused({ url }, 400, 'url_not_allowed')).body.error.param).to.equal('url');

    it('refuses anything but https', async () => {
      await forbidden(`http://127.0.0.2:${host.port}/cat.png`); // even an address the operator trusts
      await forbidden('ftp://example.com/cat.png');
      await forbidden('file:///etc/passwd');
      await forbidden('gopher://127.0.0.2/');
      await forbidden('not a url');
    });

    it('refuses loopback addresses in every spelling, before connecting', async () => {
      const before = host.hits.length;
      for (const h of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '2130706433', '0x7f.1', '127.1', '0.0.0.0']) {
        await forbidden(`https://${h}:${host.port}/cat.png`);
      }
      expect(host.hits.length, 'no connection reached the loopback server').to.equal(before);
    });

    it('refuses private, link-local, CGNAT and metadata addresses', async () => {
      for (const h of ['10.0.0.5', '172.16.3.4', '192.168.1.1', '100.64.0.1', '169.254.169.254', '[fd00:ec2::254]', '[fe80::1]', '[fc00::1]', 'metadata.google.internal', '224.0.0.1']) {
        await forbidden(`https://${h}/latest/meta-data/`);
      }
    });

    it('refuses redirects to loopback, metadata, private or non-https targets', async () => {
      const before = host.hits.filter((h) => h.startsWith('127.0.0.1')).length;
      for (const to of [
        `https://127.0.0.1:${host.port}/cat.png`,
        'https://169.254.169.254/latest/meta-data/iam/',
        'https://10.1.2.3/x.png',
        `http://127.0.0.2:${host.port}/cat.png`,
        `https://[::1]:${host.port}/cat.png`,
      ]) {
        await forbidden(`${host.url()}/redirect?to=${encodeURIComponent(to)}`);
      }
      expect(host.hits.filter((h) => h.startsWith('127.0.0.1')).length).to.equal(before);
    });

    it('gives up on redirect loops and failed fetches with image_fetch_failed', async () => {
      expect((await refused({ url: `${host.url()}/loop` }, 400, 'image_fetch_failed')).body.error.param).to.equal('url');
      await refused({ url: `${host.url()}/missing.png` }, 400, 'image_fetch_failed');
      // neither Node's message (which names the address and port it tried) nor how it failed (unreachable-urls.test.ts)
      await withSettings({ IMAGE_FETCH_TIMEOUT_MS: '300' }, async () => {
        expect((await refused({ url: 'https://127.0.0.2:1/cat.png' }, 400, 'image_fetch_failed')).body.error.message).to.equal('Error while downloading https://127.0.0.2:1/cat.png.');
      });
    });
  });

  it('stops downloading a URL when the caller hangs up, well before IMAGE_FETCH_TIMEOUT_MS (10 s)', async () => {
    const ac = new AbortController();
    const sent = fetch(`${env().gw.url}/v1/images/uploads`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${host.url()}/trickle.png` }),
      signal: ac.signal,
    }).catch(() => undefined);
    const until = async (ok: () => boolean, ms: number) => {
      const t0 = Date.now();
      while (!ok() && Date.now() - t0 < ms) await new Promise((r) => setTimeout(r, 20));
      return ok();
    };
    expect(await until(() => host.hits.some((h) => h.endsWith('/trickle.png')), 5000), 'the download began').to.equal(true);
    ac.abort();
    await sent;
    expect(await until(() => host.closed.includes('/trickle.png'), 3000), 'the download stopped within 3 s of the hang-up').to.equal(true);
  });

  it('refuses oversized images: declared, streamed, base64 and multipart (413 image_too_large)', async () => {
    // each names the field or part that carried the bytes in `param`
    expect((await refused({ url: `${host.url()}/big.png` }, 413, 'image_too_large')).body.error.param).to.equal('url');
    expect((await refused({ url: `${host.url()}/big-chunked.png` }, 413, 'image_too_large')).body.error.param).to.equal('url');
    const big = Buffer.concat([await pngOf(8, 8), Buffer.alloc(11 * 1024 * 1024)]);
    // this one is over the JSON body's own cap: refused as a whole body, before any field is read
    expect((await refused({ b64_json: big.toString('base64') }, 413, 'image_too_large')).body.error.param).to.equal(null);
    const form = new FormData();
    form.append('file', new Blob([big], { type: 'image/png' }), 'big.png');
    const before = await Image.count({ where: { orgId: o.org.id } });
    const res = await fetch(`${env().gw.url}/v1/images/uploads`, { method: 'POST', headers: keyHeader(o.key), body: form });
    expect(res.status).to.equal(413);
    const text = await res.text();
    expectErrorEnvelope(text, 'image_too_large');
    expect(JSON.parse(text).error.param).to.equal('file');
    expect(await Image.count({ where: { orgId: o.org.id } }), 'nothing stored').to.equal(before);
  });

  it('refuses non-images by their magic bytes, whatever the name or content type says', async () => {
    expect((await refused({ url: `${host.url()}/fake.png` }, 400, 'unsupported_image_type')).body.error.param).to.equal('url');
    expect((await refused({ b64_json: Buffer.from('GIF89a not supported').toString('base64') }, 400, 'unsupported_image_type')).body.error.param).to.equal('b64_json');
    await refused({ b64_json: Buffer.from('%PDF-1.4 hello').toString('base64') }, 400, 'unsupported_image_type');
    const truncated = (await pngOf(64, 64)).subarray(0, 40);
    expect((await refused({ b64_json: truncated.toString('base64') }, 400, 'invalid_image')).body.error.param).to.equal('b64_json');
    // a PNG signature cut short before its first chunk (the type sniffer runs out of bytes): refused, not a 500
    await refused({ b64_json: Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 13, 10]).toString('base64') }, 400, 'invalid_image');
    // a real PNG, but over 8192 px on a side (wide, then tall)
    await refused({ b64_json: (await pngOf(8193, 1)).toString('base64') }, 400, 'invalid_image');
    await refused({ b64_json: (await pngOf(1, 8193)).toString('base64') }, 400, 'invalid_image');
    const edge = await upload({ b64_json: (await pngOf(8192, 1)).toString('base64') });
    expect(edge.status, edge.text).to.equal(201);
    expect(edge.body.width).to.equal(8192);
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('plain text pretending')], { type: 'image/png' }), 'cat.png');
    const res = await fetch(`${env().gw.url}/v1/images/uploads`, { method: 'POST', headers: keyHeader(o.key), body: form });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { code: string; param: string } }).error).to.deep.include({ code: 'unsupported_image_type', param: 'file' });
  });

  it('refuses multipart uploads with a stray part, no file or two files', async () => {
    const png = await pngOf(16, 16);
    const send = async (fill: (f: FormData) => void, code: string) => {
      const form = new FormData();
      fill(form);
      const res = await fetch(`${env().gw.url}/v1/images/uploads`, { method: 'POST', headers: keyHeader(o.key), body: form });
      const text = await res.text();
      expect(res.status, text).to.equal(400);
      expectErrorEnvelope(text, code);
      const requestId = res.headers.get('x-service-request-id');
      expect(await usageFor(requestId)).to.equal(null);
      expect(await Image.count({ where: { requestId: requestId! } })).to.equal(0);
    };
    await send((f) => f.append('image', new Blob([png], { type: 'image/png' }), 'a.png'), 'unknown_field');
    await send((f) => {
      f.append('file', new Blob([png], { type: 'image/png' }), 'a.png');
      f.append('purpose', 'edit');
    }, 'unknown_field');
    await send((f) => f.append('note', 'no file here'), 'unknown_field');
    await send((f) => {
      f.append('file', new Blob([png], { type: 'image/png' }), 'a.png');
      f.append('file', new Blob([png], { type: 'image/png' }), 'b.png');
    }, 'invalid_request');
  });

  it('refuses malformed upload bodies', async () => {
    await refused({}, 400, 'invalid_request');
    await refused({ url: `${host.url()}/cat.png`, b64_json: 'AAAA' }, 400, 'invalid_request');
    await refused({ url: 42 }, 400, 'invalid_request');
    await refused({ b64_json: '***' }, 400, 'invalid_request');
    await refused({ url: `${host.url()}/cat.png`, purpose: 'x' }, 400, 'unknown_field');
    const r = await call('POST', '/v1/images/uploads', { headers: { ...keyHeader(o.key), 'content-type': 'text/plain' }, raw: 'hello' });
    expect(r.status).to.equal(415);
    const bad = await call('POST', '/v1/images/uploads', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: '{"url":' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('invalid_json');
  });
});
