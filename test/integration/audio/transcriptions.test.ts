import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { expectCleanAndUnmetered, multipartBody, postAudio, spoolFiles, transcriptionParts } from '../../helpers/multipart';
import { UsageEvent, RoutingPlan } from '../../../shared/db/models';
import { setSwitch } from '../../../shared/switches/switches';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { waitFor } from '../../helpers/wait';
import { outboxDuring, usageSettled } from '../../helpers/usage';

const speech = makeWav(SPEECH_LIKE);
const silent = makeWav([{ seconds: 3 }]);

describe('audio transcription: the happy paths', () => {
  let o: TestOrg;
  let client: OpenAI;
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  beforeEach(resetSim);

  it('the openai client gets json: the text of three stretches of sound, metered once by duration', async () => {
    const file = await toFile(speech, 'meeting.wav', { type: 'audio/wav' });
    const { result: raw, records } = await outboxDuring(() => client.audio.transcriptions.create({ file, model: 'sim-whisper' }).withResponse());
    const r = raw.data;
    expect(r.text.split(' ')).to.have.length(2 + 3 + 1); // 0.8 s, 1.2 s and 0.4 s of tone at 2.5 words/s
    expect(raw.response.headers.get('content-type')).to.equal('application/json');
    expect(raw.response.headers.get('content-length')).to.equal(String(Buffer.byteLength(JSON.stringify(r))));
    expect(raw.response.headers.get('transfer-encoding')).to.equal(null);
    expect(r.usage).to.deep.equal({ type: 'duration', seconds: 4 });
    const id = raw.response.headers.get('x-service-request-id')!;
    const queued = records.filter((u) => u.requestId === id);
    expect(queued, 'one outbox entry for the request').to.have.length(1);
    expect(queued[0]).to.deep.include({ orgId: o.org.id, model: 'sim-whisper', modality: 'audio', units: { audio_duration_ms: 4000 } });
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId: id } });
    expect(events).to.have.length(1);
    expect(events[0].modality).to.equal('audio');
    expect(events[0].model).to.equal('sim-whisper');
    expect(events[0].units).to.deep.equal({ audio_duration_ms: 4000 });
    expect(Number.isInteger(events[0].units.audio_duration_ms)).to.equal(true);
    expect(events[0].orgId).to.equal(o.org.id);
    expect(spoolFiles()).to.deep.equal([]);
    // The upstream got the audio under a neutral name, in verbose_json, never the caller's filename.
    const up = env().sim.log.entries.at(-1)!.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(up.file).to.deep.equal({ name: 'audio.wav', type: 'audio/wav', bytes: speech.length });
    expect(up.response_format).to.equal('verbose_json');
    expect(up.model).to.equal('sim-whisper-1');
  });

  it('the openai client gets text as text/plain with a Content-Length', async () => {
    const raw = await client.audio.transcriptions
      .create({ file: await toFile(speech, 'a.wav'), model: 'sim-whisper', response_format: 'text' })
      .withResponse();
    expect(raw.data).to.be.a('string');
    expect((raw.data as string).split(' ')).to.have.length(6);
    expect(raw.response.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    expect(raw.response.headers.get('content-length')).to.equal(String(Buffer.byteLength(raw.data as string)));
  });

  it('the openai client gets verbose_json with segments and word timestamps where the tones are', async () => {
    const raw = await client.audio.transcriptions
      .create({
        file: await toFile(speech, 'a.wav'),
        model: 'sim-whisper',
        response_format: 'verbose_json',
        timestamp_granularities: ['word', 'segment'],
        language: 'en-US',
        temperature: 0.2,
        prompt: 'Glossary: amber, quartz.',
      })
      .withResponse();
    const r = raw.data;
    expect(r.duration).to.equal(4);
    expect(r.language).to.equal('english');
    expect((r as unknown as { task: string }).task).to.equal('transcribe');
    expect(r.segments).to.have.length(3);
    const bounds = r.segments!.map((s) => [s.start, s.end]);
    const near = (a: number, b: number) => Math.abs(a - b) <= 0.03;
    [[0.2, 1.0], [1.5, 2.7], [3.2, 3.6]].forEach(([s, e], i) => {
      expect(near(bounds[i][0], s) && near(bounds[i][1], e), `segment ${i} ${bounds[i]}`).to.equal(true);
    });
    expect(r.words).to.have.length(6);
    for (const w of r.words!) {
      const seg = r.segments!.find((s) => w.start >= s.start && w.end <= s.end);
      expect(seg, `word ${w.word} inside a segment`).to.not.equal(undefined);
    }
    expect(r.text).to.equal(r.words!.map((w) => w.word).join(' '));
    expect(r.usage).to.deep.equal({ type: 'duration', seconds: 4 });
    const up = env().sim.log.entries.at(-1)!.body as Record<string, unknown>;
    expect(up.language).to.equal('en');
    expect(up.temperature).to.equal('0.2');
    expect(up.prompt).to.equal('Glossary: amber, quartz.');
    expect(up.timestamp_granularities).to.deep.equal(['segment', 'word']);
  });

  it('verbose_json without granularities has segments and no words', async () => {
    const r = await client.audio.transcriptions.create({ file: await toFile(speech, 'a.wav'), model: 'sim-whisper', response_format: 'verbose_json' });
    expect(r.segments).to.have.length(3);
    expect(r).to.not.have.property('words');
  });

  it('a silent WAV gives 200, empty text, zero segments, duration 0, no usage, and is not metered', async () => {
    for (const response_format of ['json', 'verbose_json'] as const) {
      const raw = await client.audio.transcriptions
        .create({ file: await toFile(silent, 'quiet.wav'), model: 'sim-whisper', response_format, timestamp_granularities: response_format === 'verbose_json' ? ['word'] : undefined })
        .withResponse();
      const r = raw.data as unknown as Record<string, unknown>;
      expect(r.text).to.equal('');
      expect(r).to.not.have.property('usage');
      if (response_format === 'verbose_json') {
        expect(r.segments).to.deep.equal([]);
        expect(r.words).to.deep.equal([]);
        expect(r.duration).to.equal(0);
      }
      await expectCleanAndUnmetered(raw.response.headers.get('x-service-request-id')!);
    }
    // The upstream did hear 3 s of audio: the emptiness is the gateway's rule, not a short file.
    const up = env().sim.log.entries.at(-1)!.body as { file: { bytes: number } };
    expect(up.file.bytes).to.equal(silent.length);
  });

  it('is served on every auth surface (path key, path key with project, routing plan)', async () => {
    const plan = await RoutingPlan.create({ orgId: o.org.id, name: 'audio-plan', modelMap: { transcriber: 'sim-whisper' }, projectId: null } as never);
    await bumpEpoch(env().redis);
    const body = multipartBody(transcriptionParts(speech));
    const paths: Array<[string, Record<string, string>, string | null]> = [
      [`/a/${o.key}/v1/audio/transcriptions`, {}, 'true'],
      [`/a/${o.key}/p/proj/v1/audio/transcriptions`, {}, 'true'],
      [`/r/${plan.id}/v1/audio/transcriptions`, keyHeader(o.key), null],
      ['/v1/audio/transcriptions', { authorization: `Bearer ${o.key}` }, null],
    ];
    for (const [path, headers, deprecation] of paths) {
      const r = await postAudio(path, headers, body);
      expect(r.status, `${path}: ${r.text}`).to.equal(200);
      expect(r.body.text.split(' ')).to.have.length(6);
      expect(r.headers.get('deprecation')).to.equal(deprecation);
      await usageSettled();
      expect(await UsageEvent.count({ where: { requestId: r.requestId } })).to.equal(1);
    }
    const viaAlias = await postAudio(`/r/${plan.id}/v1/audio/transcriptions`, keyHeader(o.key), multipartBody(transcriptionParts(speech, [], 'transcriber')));
    expect(viaAlias.status, viaAlias.text).to.equal(200);
    await usageSettled();
    const ev = await UsageEvent.findOne({ where: { requestId: viaAlias.requestId } });
    expect(ev!.projectId).to.equal(null);
    const withProject = await postAudio(`/a/${o.key}/p/proj/v1/audio/transcriptions`, {}, body);
    await usageSettled();
    expect((await UsageEvent.findOne({ where: { requestId: withProject.requestId } }))!.projectId).to.equal(o.project.id);
    const unauth = await postAudio('/v1/audio/transcriptions', {}, body);
    expect(unauth.status).to.equal(401);
    expect(unauth.body.error.code).to.equal('INVALID_API_KEY');
  });

  it('lists only transcription-capable models with a valid audio_config', async () => {
    const r = await call('GET', '/v1/audio/transcriptions/models', { headers: keyHeader(o.key) });
    expect(r.status).to.equal(200);
    const ids = r.body.data.map((m: { id: string }) => m.id);
    expect(ids).to.include('sim-whisper');
    expect(ids).to.not.include('sim-chat');
    const w = r.body.data.find((m: { id: string }) => m.id === 'sim-whisper');
    expect(w.audio_config).to.include({ max_duration_seconds: 3600, supports_word_timestamps: true });
    expect(w.pricing).to.deep.equal({ audio_second: 100 });
  });

  describe('switches', () => {
    afterEach(async () => {
      await setSwitch(env().redis, 'transcription', false);
      await env().gw.ctx.switches.refresh();
    });

    it('the operator kill switch answers 503 audio_transcription_disabled on both routes, then releases', async () => {
      await setSwitch(env().redis, 'transcription', true);
      await env().gw.ctx.switches.refresh();
      const post = await postAudio('/v1/audio/transcriptions', keyHeader(o.key), multipartBody(transcriptionParts(speech)));
      expect(post.status).to.equal(503);
      expect(post.body.error.code).to.equal('audio_transcription_disabled');
      expect(post.headers.get('retry-after')).to.be.a('string');
      await expectCleanAndUnmetered(post.requestId);
      expect(env().sim.log.entries, 'nothing reached the backend').to.have.length(0);
      // The switch answers before the body is read: even a body that is not multipart gets the 503.
      const junk = await call('POST', '/v1/audio/transcriptions', { headers: keyHeader(o.key), json: { model: 'sim-whisper' } });
      expect([junk.status, junk.body?.error?.code]).to.deep.equal([503, 'audio_transcription_disabled']);
      const list = await call('GET', '/v1/audio/transcriptions/models', { headers: keyHeader(o.key) });
      expect(list.status).to.equal(503);
      expect(list.body.error.code).to.equal('audio_transcription_disabled');
      await setSwitch(env().redis, 'transcription', false);
      expect(await waitFor(async () => (await call('GET', '/v1/audio/transcriptions/models', { headers: keyHeader(o.key) })).status === 200, 3000)).to.equal(true);
    });

    it("an org with audio off gets 403 audio_disabled; another org is unaffected", async () => {
      const off = await buildOrg(env().redis, { policies: { audio: 'off' } });
      const r = await postAudio('/v1/audio/transcriptions', keyHeader(off.key), multipartBody(transcriptionParts(speech)));
      expect(r.status).to.equal(403);
      expect(r.body.error.code).to.equal('audio_disabled');
      await expectCleanAndUnmetered(r.requestId);
      expect(env().sim.log.entries, 'nothing reached the backend').to.have.length(0);
      // The org switch refuses transcriptions, not the listing (docs/audio.md).
      const list = await call('GET', '/v1/audio/transcriptions/models', { headers: keyHeader(off.key) });
      expect(list.status, list.text).to.equal(200);
      expect(list.body.data.map((m: { id: string }) => m.id)).to.include('sim-whisper');
      const ok = await postAudio('/v1/audio/transcriptions', keyHeader(o.key), multipartBody(transcriptionParts(speech)));
      expect(ok.status).to.equal(200);
    });
  });
});
