import zlib from 'zlib';
import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { expectOpenAI } from '../../helpers/conformance';
import { ScriptedUpstream, type UpstreamKind } from '../../helpers/scripted-upstream';

/**
 * verbose_json from transcription backends that send less than OpenAI: the caller still gets every
 * field OpenAI's document requires (CreateTranscriptionResponseVerboseJson, TranscriptionSegment,
 * TranscriptionWord), typed as it says, through the OpenAI client, for each backend kind.
 */
const speech = makeWav(SPEECH_LIKE);

/** whisper.cpp's server: no seek, compression_ratio or no_speech_prob; words per token inside segments; a NaN avg_logprob written as null. */
const whisperCpp = {
  task: 'transcribe',
  language: 'english',
  duration: 4,
  text: ' amber quartz. cedar',
  segments: [
    {
      id: 0,
      text: ' amber quartz.',
      start: 0.2,
      end: 1.0,
      tokens: [50364, 1079, 2261],
      words: [
        { word: ' amber', start: 0.2, end: 0.5, t_dtw: -1, probability: 0.9 },
        { word: ' quartz.', start: 0.5, end: 1.0, t_dtw: -1, probability: 0.8 },
      ],
      temperature: 0,
      avg_logprob: -0.31,
    },
    { id: 1, text: ' cedar', start: 1.5, end: 2.7, words: [{ word: ' cedar', start: 1.5, end: 2.7, t_dtw: -1, probability: 0.7 }], temperature: 0, avg_logprob: null },
  ],
};

/** The least a backend can answer: text, duration, and segments of start, end and text (no language, no ids). */
const sparse = { text: 'amber quartz cedar', duration: 4, segments: [{ start: 0.25, end: 1.004, text: ' amber quartz' }, { start: 1.5, end: 2.7, text: ' cedar' }] };

const ratio = (t: string) => Buffer.byteLength(t) / zlib.deflateSync(Buffer.from(t)).length;

for (const kind of ['openai', 'azure'] as UpstreamKind[]) {
  describe(`audio transcription: verbose_json complete by OpenAI's document from a sparse ${kind} backend`, function () {
    this.timeout(30_000);
    let up: ScriptedUpstream;
    let model: string;
    let client: OpenAI;
    before(async () => {
      up = await ScriptedUpstream.start(kind);
      model = await up.model({
        capabilities: { transcription: true },
        prices: { audio_second: 100 },
        config: { audio_config: { max_duration_seconds: 3600, supports_word_timestamps: true } },
      });
      client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    });
    beforeEach(() => (up.reset(), resetSim()));
    after(() => up.close());

    const transcribe = async (answer: object, extra: Partial<OpenAI.Audio.TranscriptionCreateParams> = {}) => {
      up.next.push({ kind: 'json', body: answer });
      const r = await client.audio.transcriptions.create({ file: await toFile(speech, 'a.wav'), model, response_format: 'verbose_json', ...extra } as OpenAI.Audio.TranscriptionCreateParamsNonStreaming<'verbose_json'>);
      expect(up.received, 'the backend was called once').to.have.length(1);
      return r as OpenAI.Audio.TranscriptionVerbose & { task: string };
    };

    it("whisper.cpp's answer: the missing fields filled, the given ones kept, its segment words lifted to words", async () => {
      const r = await transcribe(whisperCpp, { timestamp_granularities: ['word', 'segment'], temperature: 0.3 });
      expectOpenAI('CreateTranscriptionResponseVerboseJson', r);
      for (const s of r.segments!) expectOpenAI('TranscriptionSegment', s);
      expect(r.segments![0]).to.deep.equal({ id: 0, seek: 20, start: 0.2, end: 1.0, text: ' amber quartz.', tokens: [50364, 1079, 2261], temperature: 0, avg_logprob: -0.31, compression_ratio: ratio(' amber quartz.'), no_speech_prob: 0 });
      expect(r.segments![1]).to.deep.include({ id: 1, seek: 150, tokens: [], temperature: 0, avg_logprob: 0, no_speech_prob: 0 });
      expect(r.words).to.deep.equal([
        { word: 'amber', start: 0.2, end: 0.5 },
        { word: 'quartz.', start: 0.5, end: 1.0 },
        { word: 'cedar', start: 1.5, end: 2.7 },
      ]);
      expect(r).to.deep.include({ task: 'transcribe', language: 'english', duration: 4, text: ' amber quartz. cedar', usage: { type: 'duration', seconds: 4 } });
      if (kind === 'azure') expect(up.received[0].path).to.equal('/openai/deployments/up-model/audio/transcriptions?api-version=2024-10-21');
    });

    it("a bare answer: ids by position, seek from the start, the request's temperature, neutral scores", async () => {
      const r = await transcribe(sparse, { temperature: 0.3 });
      expectOpenAI('CreateTranscriptionResponseVerboseJson', r);
      for (const s of r.segments!) expectOpenAI('TranscriptionSegment', s);
      expect(r.segments!.map((s) => [s.id, s.seek, s.temperature, s.avg_logprob, s.no_speech_prob, s.tokens])).to.deep.equal([
        [0, 25, 0.3, 0, 0, []],
        [1, 150, 0.3, 0, 0, []],
      ]);
      expect(r.segments!.map((s) => s.compression_ratio)).to.deep.equal([ratio(' amber quartz'), ratio(' cedar')]);
      expect(r).to.not.have.property('words');
      expect(r).to.deep.include({ task: 'transcribe', language: 'unknown', duration: 4, usage: { type: 'duration', seconds: 4 } });
      expect(up.received[0].body.temperature).to.equal('0.3');
    });

    it('without a temperature the filled one is 0, and words asked of a backend that has none are []', async () => {
      const r = await transcribe(sparse, { timestamp_granularities: ['word'] });
      expectOpenAI('CreateTranscriptionResponseVerboseJson', r);
      expect(r.segments!.map((s) => s.temperature)).to.deep.equal([0, 0]);
      expect(r.words).to.deep.equal([]);
    });
  });
}
