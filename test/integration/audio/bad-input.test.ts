import net from 'net';
import { expect } from 'chai';
import { streamUntilAnswered } from '../../helpers/stream-upload';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { BOUNDARY, expectCleanAndUnmetered, multipartBody, postAudio, spoolFiles, transcriptionParts, type Part } from '../../helpers/multipart';
import { Model, Provider } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { config } from '../../../shared/config/env';
import { waitFor } from '../../helpers/wait';
import { expectErrorEnvelope } from '../../helpers/errors';

const PATH = '/v1/audio/transcriptions';
const speech = makeWav(SPEECH_LIKE);
const MiB = 1024 * 1024;

/** A WAV of exactly `bytes` bytes (silence; the header says so, whatever the size). */
function wavOfSize(bytes: number): Buffer {
  const w = makeWav([{ seconds: 0.01 }]);
  const out = Buffer.alloc(bytes);
  w.copy(out, 0, 0, 44);
  out.writeUInt32LE(bytes - 8, 4);
  out.writeUInt32LE(bytes - 44, 40);
  return out;
}

describe('audio transcription: every bad input is refused, spooled nothing, metered nothing', () => {
  let o: TestOrg;
  const send = (parts: Part[], contentType?: string) => postAudio(PATH, keyHeader(o.key), multipartBody(parts), contentType);
  const expectRefused = async (r: Awaited<ReturnType<typeof postAudio>>, status: number, code: string) => {
    expect(r.status, r.text).to.equal(status);
    expectErrorEnvelope(r.text, code); // the code, and no stack trace
    await expectCleanAndUnmetered(r.requestId);
  };

  before(async () => {
    o = await buildOrg(env().redis);
    const sim = await Provider.findOne({ where: { name: 'simulator' } });
    const base = { providerId: sim!.id, upstreamName: 'sim-whisper-1', contextWindow: null, maxOutputTokens: null, prices: { audio_second: 100 } };
    await Model.bulkCreate([
      { ...base, publicId: 'test-whisper-short', displayName: 'Short', capabilities: { transcription: true }, config: { audio_config: { max_duration_seconds: 2, supports_word_timestamps: false } } },
      { ...base, publicId: 'test-whisper-broken', displayName: 'Broken', capabilities: { transcription: true }, config: { audio_config: { max_duration_seconds: 7200, supports_word_timestamps: true } } },
    ]);
    await bumpEpoch(env().redis);
  });
  after(async () => {
    await Model.destroy({ where: { publicId: ['test-whisper-short', 'test-whisper-broken'] } });
    await bumpEpoch(env().redis);
  });
  // Each test counts the requests it lets reach the upstream (accepted ones); the log is never reset
  // mid-test, so a refused request that reached the upstream too is always seen here.
  let allowedUpstream = 0;
  const accepted = (n = 1) => (allowedUpstream += n);
  beforeEach(() => {
    resetSim();
    allowedUpstream = 0;
  });
  afterEach(() => expect(env().sim.log.entries.filter((e) => e.path === PATH), 'only the accepted requests reached the upstream').to.have.length(allowedUpstream));

  describe('400 invalid_request', () => {
    it('a body that is not multipart', async () => {
      await expectRefused(await call('POST', PATH, { headers: keyHeader(o.key), json: { model: 'sim-whisper' } }).then((r) => ({ ...r, requestId: r.headers.get('x-service-request-id')! })), 400, 'invalid_request');
    });
    it('multipart without a boundary', async () => {
      await expectRefused(await send(transcriptionParts(speech), 'multipart/form-data'), 400, 'invalid_request');
    });
    it('a truncated multipart body (cut inside the file part, no closing boundary)', async () => {
      const whole = multipartBody(transcriptionParts(speech), { close: false });
      await expectRefused(await postAudio(PATH, keyHeader(o.key), whole.subarray(0, whole.length - 20_000)), 400, 'invalid_request');
    });
    it('no file part', async () => await expectRefused(await send([{ name: 'model', value: 'sim-whisper' }]), 400, 'invalid_request'));
    it('no model part', async () => await expectRefused(await send([transcriptionParts(speech)[0]]), 400, 'invalid_request'));
    it('an empty model part', async () => await expectRefused(await send(transcriptionParts(speech, [], '')), 400, 'invalid_request'));
    it('a duplicate model part', async () => {
      await expectRefused(await send(transcriptionParts(speech, [{ name: 'model', value: 'sim-whisper' }])), 400, 'invalid_request');
    });
    it('a duplicate file part', async () => {
      await expectRefused(await send(transcriptionParts(speech, [{ name: 'file', value: speech, filename: 'b.wav' }])), 400, 'invalid_request');
    });
    it('a duplicate language part', async () => {
      await expectRefused(await send(transcriptionParts(speech, [{ name: 'language', value: 'en' }, { name: 'language', value: 'fr' }])), 400, 'invalid_request');
    });
    it('file sent as a text field', async () => {
      await expectRefused(await send([{ name: 'file', value: 'not a file' }, { name: 'model', value: 'sim-whisper' }]), 400, 'invalid_request');
    });
    it('a file part over 64 KiB sent without a filename (read as text) names the problem', async () => {
      const r = await send([{ name: 'file', filename: '', value: wavOfSize(100 * 1024), contentType: 'audio/wav' }, { name: 'model', value: 'sim-whisper' }]);
      await expectRefused(r, 400, 'invalid_request');
      expect(r.body.error.message).to.include('without a filename');
    });
    it('an empty file', async () => await expectRefused(await send(transcriptionParts(Buffer.alloc(0))), 400, 'invalid_request'));
    it('a model that cannot serve transcription', async () => await expectRefused(await send(transcriptionParts(speech, [], 'sim-chat')), 400, 'invalid_request'));
    it('an unknown model', async () => await expectRefused(await send(transcriptionParts(speech, [], 'no-such-model')), 400, 'invalid_request'));
    it('a transcription model whose audio_config is invalid (and it is not listed)', async () => {
      await expectRefused(await send(transcriptionParts(speech, [], 'test-whisper-broken')), 400, 'invalid_request');
      const list = await call('GET', '/v1/audio/transcriptions/models', { headers: keyHeader(o.key) });
      const ids = list.body.data.map((m: { id: string }) => m.id);
      expect(ids).to.include('test-whisper-short');
      expect(ids).to.not.include('test-whisper-broken');
    });
    it('17 parts', async () => {
      const extra = Array.from({ length: 15 }, () => ({ name: 'timestamp_granularities[]', value: 'segment' }));
      const ok = await send(transcriptionParts(speech, [{ name: 'response_format', value: 'verbose_json' }, ...extra.slice(0, 13)]));
      expect(ok.status, `16 parts are fine: ${ok.text}`).to.equal(200);
      accepted();
      await expectRefused(await send(transcriptionParts(speech, [{ name: 'response_format', value: 'verbose_json' }, ...extra.slice(0, 14)])), 400, 'invalid_request');
    });
    it('a 65 KiB text part', async () => {
      await expectRefused(await send(transcriptionParts(speech, [{ name: 'prompt', value: 'p'.repeat(65 * 1024) }])), 400, 'invalid_request');
    });
    it('a compressed body', async () => {
      const r = await postAudio(PATH, { ...keyHeader(o.key), 'content-encoding': 'gzip' }, multipartBody(transcriptionParts(speech)));
      await expectRefused(r, 400, 'invalid_request');
    });
  });

  describe('400 unsupported_parameter', () => {
    const cases: Array<[string, Part[], string?]> = [
      ['an unknown part', [{ name: 'foo', value: 'bar' }]],
      ['an unknown file part', [{ name: 'attachment', value: speech, filename: 'x.wav' }]],
      ['stream=true', [{ name: 'stream', value: 'true' }]],
      ['stream=false', [{ name: 'stream', value: 'false' }]],
      ['timestamp_granularities without []', [{ name: 'response_format', value: 'verbose_json' }, { name: 'timestamp_granularities', value: 'word' }]],
      ['response_format=srt', [{ name: 'response_format', value: 'srt' }]],
      ['response_format=JSON', [{ name: 'response_format', value: 'JSON' }]],
      ['temperature 1.5', [{ name: 'temperature', value: '1.5' }]],
      ['temperature -0.1', [{ name: 'temperature', value: '-0.1' }]],
      ['temperature not a number', [{ name: 'temperature', value: 'warm' }]],
      ['temperature empty', [{ name: 'temperature', value: '' }]],
      ['language as a name', [{ name: 'language', value: 'english' }]],
      ['language not an ISO-639-1 code', [{ name: 'language', value: 'xx' }]],
      ['language with a bad region', [{ name: 'language', value: 'en-USA' }]],
      ['timestamp_granularities[] with json', [{ name: 'timestamp_granularities[]', value: 'segment' }]],
      ['timestamp_granularities[] with text', [{ name: 'response_format', value: 'text' }, { name: 'timestamp_granularities[]', value: 'word' }]],
      ['timestamp_granularities[]=char', [{ name: 'response_format', value: 'verbose_json' }, { name: 'timestamp_granularities[]', value: 'char' }]],
      ['word timestamps on a model without them', [{ name: 'response_format', value: 'verbose_json' }, { name: 'timestamp_granularities[]', value: 'word' }], 'test-whisper-short'],
      ['a prompt over 4096 characters', [{ name: 'prompt', value: 'é'.repeat(4097) }]],
    ];
    for (const [name, extra, model] of cases) {
      it(name, async () => await expectRefused(await send(transcriptionParts(speech, extra, model)), 400, 'unsupported_parameter'));
    }
    // OpenAI's ErrorResponse names the parameter at fault (`"param": "response_format"` on its own
    // transcription refusals; its SDKs expose it as `error.param`): the part, as the caller sent it.
    it('each refusal names its part in error.param; refusals of the body as a whole name none', async () => {
      const cases: Array<[Part[], string | null, string?]> = [
        [transcriptionParts(speech, [{ name: 'response_format', value: 'srt' }]), 'response_format'],
        [transcriptionParts(speech, [{ name: 'temperature', value: '1.5' }]), 'temperature'],
        [transcriptionParts(speech, [{ name: 'language', value: 'english' }]), 'language'],
        [transcriptionParts(speech, [{ name: 'prompt', value: 'é'.repeat(4097) }]), 'prompt'],
        [transcriptionParts(speech, [{ name: 'timestamp_granularities[]', value: 'segment' }]), 'timestamp_granularities[]'],
        [transcriptionParts(speech, [{ name: 'response_format', value: 'verbose_json' }, { name: 'timestamp_granularities[]', value: 'char' }]), 'timestamp_granularities[]'],
        [transcriptionParts(speech, [{ name: 'response_format', value: 'verbose_json' }, { name: 'timestamp_granularities[]', value: 'word' }], 'test-whisper-short'), 'timestamp_granularities[]'],
        [transcriptionParts(speech, [{ name: 'stream', value: 'true' }]), 'stream'],
        [transcriptionParts(speech, [{ name: 'foo', value: 'bar' }]), 'foo'],
        [transcriptionParts(speech, [{ name: 'language', value: 'en' }, { name: 'language', value: 'fr' }]), 'language'],
        [transcriptionParts(speech, [{ name: 'prompt', value: 'p'.repeat(65 * 1024) }]), 'prompt'],
        [[{ name: 'model', value: 'sim-whisper' }], 'file'],
        [transcriptionParts(Buffer.alloc(0)), 'file'],
        [[transcriptionParts(speech)[0]], 'model'],
        [transcriptionParts(speech, [], 'no-such-model'), 'model'],
        [transcriptionParts(speech, [], 'sim-chat'), 'model'],
        [transcriptionParts(speech, Array.from({ length: 15 }, () => ({ name: 'timestamp_granularities[]', value: 'segment' }))), null],
      ];
      for (const [parts, param] of cases) {
        const r = await send(parts);
        expect(r.status, r.text).to.equal(400);
        expect(r.body.error, r.text).to.include({ type: 'invalid_request_error', param });
      }
      const whole = multipartBody(transcriptionParts(speech), { close: false });
      const cut = await postAudio(PATH, keyHeader(o.key), whole.subarray(0, whole.length - 20_000));
      expect(cut.body.error, cut.text).to.include({ code: 'invalid_request', param: null });
    });
    it('accepted edge values pass: temperature 0 and 1, pt_BR, es-419, a 4096-character prompt', async () => {
      for (const extra of [
        [{ name: 'temperature', value: '0' }, { name: 'language', value: 'pt_BR' }],
        [{ name: 'temperature', value: '1' }, { name: 'language', value: 'es-419' }, { name: 'prompt', value: 'é'.repeat(4096) }],
      ]) {
        const r = await send(transcriptionParts(speech, extra));
        expect(r.status, r.text).to.equal(200);
        accepted();
      }
    });
  });

  describe('sizes and time', () => {
    it('413 audio_too_large for a 25 MiB + 1 byte file, enforced while reading; 25 MiB exactly is accepted', async function () {
      this.timeout(40_000);
      await expectRefused(await send(transcriptionParts(wavOfSize(25 * MiB + 1))), 413, 'audio_too_large');
      // a chunked upload that would go on far past the cap is answered while it is still being sent
      const head = Buffer.concat([multipartBody([{ name: 'model', value: 'sim-whisper' }], { close: false }), Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`), wavOfSize(44)]);
      const streamed = await streamUntilAnswered(PATH, { ...keyHeader(o.key), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, head, 25 * MiB + 64 * MiB);
      await expectRefused({ ...streamed, requestId: streamed.headers.get('x-service-request-id') ?? '' }, 413, 'audio_too_large');
      expect(streamed.sentWhenAnswered).to.be.above(25 * MiB).and.below(streamed.total);
      const ok = await send(transcriptionParts(wavOfSize(25 * MiB)));
      expect(ok.status, ok.text).to.equal(200);
      accepted();
      expect(ok.body.text).to.equal(''); // silence
      expect((env().sim.log.entries.at(-1)!.body as { file: { bytes: number } }).file.bytes).to.equal(25 * MiB);
      await expectCleanAndUnmetered(ok.requestId);
    });

    it('400 audio_too_long when the backend-reported duration is over the model limit', async () => {
      const r = await send(transcriptionParts(speech, [], 'test-whisper-short')); // 4 s against a 2 s limit
      expect(env().sim.log.entries, 'the duration came from the backend').to.have.length(1);
      accepted();
      await expectRefused(r, 400, 'audio_too_long');
    });

    it('408 body_read_timeout for a slow-loris upload, with the spool file removed', async function () {
      this.timeout(20_000);
      const body = multipartBody(transcriptionParts(speech));
      const { port } = new URL(env().gw.url);
      const sock = net.connect(Number(port), '127.0.0.1');
      let raw = '';
      sock.on('data', (d) => (raw += String(d)));
      const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
      sock.write(
        `POST ${PATH} HTTP/1.1\r\nHost: localhost\r\nSERVICE-API-KEY: ${o.key}\r\n` +
          `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      sock.write(body.subarray(0, 4000)); // into the file part
      let sent = 4000;
      const drip = setInterval(() => sent < body.length && sock.write(body.subarray(sent, ++sent)), 200);
      const started = Date.now();
      try {
        expect(await waitFor(() => spoolFiles().length === 1, 2000), 'the upload is being spooled').to.equal(true);
        expect(await waitFor(() => raw.includes('\r\n\r\n{'), 10_000), raw).to.equal(true);
        await Promise.race([closed, new Promise((r) => setTimeout(r, 3000))]);
      } finally {
        clearInterval(drip);
        sock.destroy();
      }
      expect(Date.now() - started).to.be.within(config().audioBodyReadTimeoutMs - 500, config().audioBodyReadTimeoutMs + 3000);
      const [head, json] = raw.split('\r\n\r\n');
      expect(head).to.match(/^HTTP\/1\.1 408/);
      expect(head.toLowerCase()).to.include('connection: close');
      expect(JSON.parse(json.slice(0, json.lastIndexOf('}') + 1)).error.code).to.equal('body_read_timeout');
      await expectCleanAndUnmetered(/x-service-request-id: (\S+)/i.exec(head)![1]);
    });

    it('a client that disconnects mid-upload leaves no spool file and the gateway keeps serving', async () => {
      const body = multipartBody(transcriptionParts(speech));
      const { port } = new URL(env().gw.url);
      const sock = net.connect(Number(port), '127.0.0.1');
      sock.write(
        `POST ${PATH} HTTP/1.1\r\nHost: localhost\r\nSERVICE-API-KEY: ${o.key}\r\n` +
          `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      sock.write(body.subarray(0, 60_000));
      expect(await waitFor(() => spoolFiles().length === 1, 2000), 'the upload is being spooled').to.equal(true);
      sock.destroy();
      expect(await waitFor(() => spoolFiles().length === 0, 3000), 'spool emptied').to.equal(true);
      const ok = await send(transcriptionParts(speech));
      expect(ok.status).to.equal(200);
      accepted();
    });
  });
});
