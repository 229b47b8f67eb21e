import fs from 'fs';
import net from 'net';
import path from 'path';
import v8 from 'v8';
import vm from 'vm';
import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { pngOf, usageFor } from '../../helpers/images';
import { BOUNDARY, multipartBody, spoolFiles, type Part } from '../../helpers/multipart';
import { expectErrorEnvelope } from '../../helpers/errors';
import { waitFor } from '../../helpers/wait';
import { withSettings } from '../../helpers/settings';
import { Image } from '../../../shared/db/models';
import { config } from '../../../shared/config/env';
import { sweepSpool } from '../../../shared/audio/spool';
import { startImageSpoolSweep } from '../../../shared/spool/spool';

const MiB = 1024 * 1024;

/** This run's image spool files (the audio spool directory, `.image` suffix). */
const imageSpool = () => spoolFiles().filter((f) => f.endsWith('.image'));
const spooledBytes = () => imageSpool().reduce((n, f) => n + (fs.statSync(path.join(config().audioSpoolDir, f), { throwIfNoEntry: false })?.size ?? 0), 0);
const noImageSpoolLeft = async () => {
  await waitFor(() => imageSpool().length === 0, 3000);
  expect(imageSpool(), 'image spool files left').to.deep.equal([]);
};

/** V8's collector, so a memory reading counts only what is still held. */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Starts a multipart POST on a raw socket, writing `body` (usually without its closing boundary). */
function startUpload(urlPath: string, key: string, body: Buffer, length = body.length): { sock: net.Socket; written: Promise<void>; answer: Promise<string> } {
  const sock = net.connect(Number(new URL(env().gw.url).port), '127.0.0.1');
  let raw = '';
  sock.on('data', (d) => (raw += String(d)));
  sock.on('error', () => undefined);
  const answer = new Promise<string>((resolve) => sock.on('close', () => resolve(raw)));
  sock.write(`POST ${urlPath} HTTP/1.1\r\nHost: localhost\r\nSERVICE-API-KEY: ${key}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n`);
  const written = new Promise<void>((resolve) => sock.write(body, () => resolve()));
  return { sock, written, answer };
}

/**
 * Image edits and uploads read their multipart file parts into spool files (never whole into memory):
 * the model's `max_edit_images` is checked before any is read back, the files are stored one at a
 * time, and every spool file of the request is gone when it ends, however it ends.
 */
describe('image multipart files are spooled, never held in memory', function () {
  this.timeout(60_000);
  let o: TestOrg;
  let png: Buffer;
  const file = (name: string, bytes: Buffer = png, filename = 'p.png'): Part => ({ name, value: bytes, filename, contentType: 'image/png' });
  const editParts = (files: Part[]): Part[] => [{ name: 'model', value: 'sim-image' }, { name: 'prompt', value: 'x' }, { name: 'size', value: '256x256' }, ...files];
  const post = async (urlPath: string, parts: Part[]) => {
    const res = await fetch(`${env().gw.url}${urlPath}`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: multipartBody(parts),
    });
    return { status: res.status, text: await res.text(), requestId: res.headers.get('x-service-request-id') };
  };
  before(async () => {
    o = await buildOrg(env().redis);
    png = await pngOf(32, 32);
  });
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.release());

  it('an edit with more file parts than the model edits: 400 unsupported_parameter, no spool file, nothing stored or sent', async () => {
    const before = await Image.count({ where: { orgId: o.org.id } });
    const r = await post('/v1/images/edits', editParts(Array.from({ length: 5 }, () => file('image[]'))));
    expect(r.status, r.text).to.equal(400);
    expectErrorEnvelope(r.text, 'unsupported_parameter');
    expect(JSON.parse(r.text).error.message).to.include('at most 4 image(s)');
    await noImageSpoolLeft();
    expect(await Image.count({ where: { orgId: o.org.id } }), 'no upload stored').to.equal(before);
    expect(env().sim.log.entries, 'nothing upstream').to.have.length(0);
    expect(await usageFor(r.requestId)).to.equal(null);
  });

  it('a successful multipart edit (several files) and a multipart upload leave no spool file', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const files = [await toFile(png, 'a.png', { type: 'image/png' }), await toFile(await pngOf(40, 20), 'b.png', { type: 'image/png' })];
    const edited = await client.images.edit({ model: 'sim-image', image: files, prompt: 'combine', size: '256x256' as never });
    const row = await Image.findByPk((edited.data![0] as { id: string }).id);
    expect(row!.sourceImageIds, 'both files stored as sources').to.have.length(2);
    await noImageSpoolLeft();
    const up = await post('/v1/images/uploads', [file('file')]);
    expect(up.status, up.text).to.equal(201);
    expect(JSON.parse(up.text)).to.include({ width: 32, height: 32 });
    await noImageSpoolLeft();
  });

  it('an edit whose upstream fails leaves no spool file (and no stored upload)', async () => {
    env().sim.knobs.set('sim-image-1', { status: 500 });
    const before = await Image.count({ where: { orgId: o.org.id } });
    const r = await post('/v1/images/edits', editParts([file('image')]));
    expect(r.status, r.text).to.equal(502);
    expect(env().sim.log.entries.length, 'the upstream was called').to.be.above(0);
    await noImageSpoolLeft();
    expect(await Image.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('refusals while reading (a file over the cap, a malformed body) and after it (mask, a non-image) leave no spool file', async () => {
    const big = Buffer.concat([png, Buffer.alloc(config().imageUploadMaxBytes)]);
    const over = await post('/v1/images/edits', editParts([file('image[]'), file('image[]', big)]));
    expect(over.status, over.text).to.equal(413);
    expectErrorEnvelope(over.text, 'image_too_large');
    await noImageSpoolLeft();
    const overUpload = await post('/v1/images/uploads', [file('file', big)]);
    expect(overUpload.status, overUpload.text).to.equal(413);
    expectErrorEnvelope(overUpload.text, 'image_too_large');
    await noImageSpoolLeft();
    const truncated = await fetch(`${env().gw.url}/v1/images/edits`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: multipartBody(editParts([file('image')]), { close: false }),
    });
    expect(truncated.status).to.equal(400);
    expectErrorEnvelope(await truncated.text(), 'invalid_request');
    await noImageSpoolLeft();
    const mask = await post('/v1/images/edits', editParts([file('image'), file('mask')]));
    expect(mask.status, mask.text).to.equal(400);
    expectErrorEnvelope(mask.text, 'invalid_mask_image_format'); // a PNG without alpha
    const fake = await post('/v1/images/edits', editParts([file('image', Buffer.from('not an image at all'))]));
    expect(fake.status, fake.text).to.equal(400);
    expectErrorEnvelope(fake.text, 'unsupported_image_type');
    await noImageSpoolLeft();
    expect(env().sim.log.entries, 'nothing upstream').to.have.length(0);
  });

  it('a client that disconnects mid-upload leaves no spool file; the spool file was owner-only and not named after the upload', async () => {
    const body = multipartBody(editParts([file('image', Buffer.concat([png, Buffer.alloc(2 * MiB)]), 'holiday-secret.png')]));
    const { sock, answer } = startUpload('/v1/images/edits', o.key, body.subarray(0, MiB), body.length);
    try {
      expect(await waitFor(() => imageSpool().length === 1, 3000), 'the file part is being spooled').to.equal(true);
      const [name] = imageSpool();
      expect(name).to.match(/^req_[A-Za-z0-9_-]+-[0-9a-f]{12}\.image$/);
      expect(name).to.not.include('holiday');
      expect((fs.statSync(path.join(config().audioSpoolDir, name)).mode & 0o777).toString(8), 'owner only').to.equal('600');
    } finally {
      sock.destroy();
    }
    await answer;
    await noImageSpoolLeft();
    const ok = await post('/v1/images/edits', editParts([file('image')]));
    expect(ok.status, `the gateway keeps serving: ${ok.text}`).to.equal(200);
    await noImageSpoolLeft();
  });

  it("the web process's memory does not grow by the files being uploaded: they are on disk while the form is read", async () => {
    const perFile = 8 * MiB;
    const files = [0, 1, 2].map((i) => file('image[]', Buffer.concat([png, Buffer.alloc(perFile - png.length, i + 1)])));
    const body = multipartBody(editParts(files), { close: false }); // the form never ends: the request stays in its read
    // the read is held open on purpose: a body deadline of its own, so only the spool's writes are waited for
    await withSettings({ BODY_READ_TIMEOUT_MS: '30000' }, async () => {
      gc();
      gc();
      const before = process.memoryUsage().arrayBuffers;
      const { sock, written, answer } = startUpload('/v1/images/edits', o.key, body, body.length + 64);
      try {
        await written;
        // every file's bytes have reached the spool (at once; on a pod that buffers them, never)
        await waitFor(() => spooledBytes() >= 3 * perFile - 256 * 1024, 5000);
        gc();
        gc();
        const grown = process.memoryUsage().arrayBuffers - before;
        expect(grown, `buffers held grew by ${(grown / MiB).toFixed(1)} MiB while ${(3 * perFile) / MiB} MiB of files were read`).to.be.below(perFile);
        expect(spooledBytes(), 'the files are in the spool').to.be.at.least(3 * perFile - 256 * 1024);
      } finally {
        sock.destroy();
      }
      await answer;
      await noImageSpoolLeft();
    });
  });

  it("the spool's periodic sweep (the audio worker's) removes image spool files a dead process left, not fresh ones", async () => {
    const dir = config().audioSpoolDir;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const old = path.join(dir, 'req_sweeptest-000000000000.image');
    const fresh = path.join(dir, 'req_sweeptest-111111111111.image');
    for (const f of [old, fresh]) fs.writeFileSync(f, 'x', { mode: 0o600 });
    const past = new Date(Date.now() - 3600_000);
    fs.utimesSync(old, past, past);
    try {
      expect(await sweepSpool(60_000)).to.equal(1);
      expect(fs.existsSync(old), 'old one swept').to.equal(false);
      expect(fs.existsSync(fresh), 'fresh one kept').to.equal(true);
    } finally {
      for (const f of [old, fresh]) fs.rmSync(f, { force: true });
    }
  });
  it("the web process's own sweep removes old image spool files, never an audio upload a worker may still read", async () => {
    const dir = config().audioSpoolDir;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const oldImage = path.join(dir, 'req_websweep-000000000000.image');
    const oldAudio = path.join(dir, 'req_websweep-000000000000.audio');
    const fresh = path.join(dir, 'req_websweep-111111111111.image');
    for (const f of [oldImage, oldAudio, fresh]) fs.writeFileSync(f, 'x', { mode: 0o600 });
    const past = new Date(Date.now() - 3600_000);
    for (const f of [oldImage, oldAudio]) fs.utimesSync(f, past, past);
    const stop = startImageSpoolSweep(60_000, 50);
    try {
      const until = Date.now() + 5_000;
      while (fs.existsSync(oldImage) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(fs.existsSync(oldImage), 'old image part swept').to.equal(false);
      expect(fs.existsSync(oldAudio), 'an audio upload is the audio worker\'s to sweep').to.equal(true);
      expect(fs.existsSync(fresh), 'fresh one kept').to.equal(true);
    } finally {
      stop();
      for (const f of [oldImage, oldAudio, fresh]) fs.rmSync(f, { force: true });
    }
  });
});
