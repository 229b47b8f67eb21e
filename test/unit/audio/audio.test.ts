import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import { WaveFile } from 'wavefile';
import { analyseWav } from '../../../scripts/simulator/audio';
import { parseLanguage } from '../../../shared/audio/languages';
import { isSpeechFree, parseVerboseJson, sealTranscript, speechFree, unsealTranscript } from '../../../shared/audio/transcript';
import { audioConfigOf } from '../../../shared/audio/audio-config';
import { ensureSpoolDir, spoolPath, sweepSpool } from '../../../shared/audio/spool';
import { renderTranscript } from '../../../api/routes/audio/render';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import type { CatalogModel } from '../../../shared/catalog/catalog';

/** The same tone bursts in another sample format, written by wavefile. */
function reencode(bitDepth: string, channels = 1): Buffer {
  const pcm = makeWav(SPEECH_LIKE, 8000);
  const src = new WaveFile(pcm);
  const mono = Array.from(src.getSamples(false, Float64Array) as Float64Array, (v) => v / 32768);
  const w = new WaveFile();
  const samples = channels === 1 ? mono : Array.from({ length: channels }, () => mono);
  w.fromScratch(channels, 8000, '32f', samples);
  if (bitDepth !== '32f') w.toBitDepth(bitDepth);
  return Buffer.from(w.toBuffer());
}

describe('unit: audio', () => {
  it('the simulator measures duration and finds sound between pauses in PCM 8/16/24/32-bit and float, mono and stereo', () => {
    for (const [depth, channels] of [['16', 1], ['8', 1], ['24', 2], ['32', 1], ['32f', 2]] as const) {
      const a = analyseWav(reencode(depth, channels))!;
      expect(a, `${depth}/${channels}`).to.not.equal(undefined);
      expect(a.duration).to.equal(4);
      expect(a.channels).to.equal(channels);
      const near = (x: number, y: number) => Math.abs(x - y) <= 0.03;
      const want = [[0.2, 1.0], [1.5, 2.7], [3.2, 3.6]];
      expect(a.regions.length, `${depth}/${channels}`).to.equal(3);
      a.regions.forEach((r, i) => expect(near(r.start, want[i][0]) && near(r.end, want[i][1]), `${depth} ${r.start}-${r.end}`).to.equal(true));
    }
    expect(analyseWav(makeWav([{ seconds: 2 }]))!.regions).to.deep.equal([]);
    expect(analyseWav(makeWav([{ seconds: 2, toneHz: 300, amplitude: 0.005 }]))!.regions, 'below the silence floor').to.deep.equal([]);
    expect(analyseWav(Buffer.from('ID3 not a wav at all, not at all, not at all, not at all'))).to.equal(undefined);
  });

  it('language: ISO-639-1 with an optional region, base code kept', () => {
    expect(parseLanguage('en')).to.equal('en');
    expect(parseLanguage('EN-us')).to.equal('en');
    expect(parseLanguage('pt_BR')).to.equal('pt');
    expect(parseLanguage('es-419')).to.equal('es');
    for (const bad of ['', 'xx', 'eng', 'english', 'en-', 'en-USA', 'en US', 'e1']) expect(parseLanguage(bad), bad).to.equal(undefined);
  });

  it('audio_config: valid only on transcription models with 1..3600 seconds and the word flag', () => {
    const m = (capabilities: object, audio_config: unknown) => ({ capabilities, config: { audio_config } }) as unknown as CatalogModel;
    expect(audioConfigOf(m({ transcription: true }, { max_duration_seconds: 3600, supports_word_timestamps: true }))).to.deep.equal({ max_duration_seconds: 3600, supports_word_timestamps: true });
    expect(audioConfigOf(m({ transcription: true }, { max_duration_seconds: 1, supports_word_timestamps: false }))).to.not.equal(undefined);
    for (const bad of [undefined, {}, { max_duration_seconds: 0, supports_word_timestamps: true }, { max_duration_seconds: 3601, supports_word_timestamps: true }, { max_duration_seconds: 10.5, supports_word_timestamps: true }, { max_duration_seconds: 10 }, { max_duration_seconds: '10', supports_word_timestamps: true }]) {
      expect(audioConfigOf(m({ transcription: true }, bad)), JSON.stringify(bad)).to.equal(undefined);
    }
    expect(audioConfigOf(m({ chat: true }, { max_duration_seconds: 10, supports_word_timestamps: true }))).to.equal(undefined);
  });

  it('verbose_json from a backend: required fields, unknown fields dropped, speech-free normalised, sealed for Redis', () => {
    const raw = { task: 'transcribe', language: 'english', duration: 2.5, text: ' hi there', segments: [{ id: 0, start: 0, end: 1, text: ' hi there', extra: 'x' }], words: [{ word: 'hi', start: 0, end: 0.4 }] };
    const t = parseVerboseJson(raw, true)!;
    expect(t.segments[0]).to.deep.include({ id: 0, seek: 0, start: 0, end: 1, text: ' hi there', tokens: [], temperature: 0, avg_logprob: 0, no_speech_prob: 0 });
    expect(t.segments[0]).to.not.have.property('extra');
    expect(t.words).to.have.length(1);
    expect(parseVerboseJson(raw, false)!.words).to.equal(undefined);
    expect(parseVerboseJson({ ...raw, duration: undefined }, false)).to.equal(undefined);
    expect(parseVerboseJson({ ...raw, segments: [{ start: 'a' }] }, false)).to.equal(undefined);
    expect(parseVerboseJson({ ...raw, words: undefined }, true)!.words).to.deep.equal([]);
    const quiet = parseVerboseJson({ ...raw, text: '  ', segments: [{ id: 0, start: 0, end: 1, text: ' ' }] }, true)!;
    expect(isSpeechFree(quiet)).to.equal(true);
    expect(speechFree(quiet)).to.deep.equal({ language: 'english', duration: 0, text: '', segments: [], words: [] });
    const sealed = sealTranscript(t);
    expect(JSON.stringify(sealed)).to.not.include('hi there');
    expect(unsealTranscript(sealed)).to.deep.equal(t);
  });

  it('renders json, text and verbose_json', () => {
    const t = { language: 'english', duration: 1.25, text: 'hi', segments: [] };
    expect(renderTranscript(t, 'text')).to.deep.equal({ contentType: 'text/plain; charset=utf-8', body: 'hi' });
    expect(JSON.parse(renderTranscript(t, 'json').body)).to.deep.equal({ text: 'hi', usage: { type: 'duration', seconds: 1.25 } });
    expect(JSON.parse(renderTranscript({ ...t, duration: 0, text: '' }, 'verbose_json').body)).to.deep.equal({ task: 'transcribe', language: 'english', duration: 0, text: '', segments: [] });
  });

  it('spool ids cannot escape the directory; the sweep removes only old spool files', async () => {
    expect(() => spoolPath('../etc/passwd')).to.throw();
    expect(() => spoolPath('a/b.audio')).to.throw();
    const dir = await ensureSpoolDir();
    const old = path.join(dir, 'sweep-test-old.audio');
    const fresh = path.join(dir, 'sweep-test-fresh.audio');
    const other = path.join(dir, 'sweep-test-other.txt');
    for (const f of [old, fresh, other]) fs.writeFileSync(f, 'x');
    const past = new Date(Date.now() - 3600_000);
    fs.utimesSync(old, past, past);
    fs.utimesSync(other, past, past);
    try {
      expect(await sweepSpool(60_000)).to.equal(1);
      expect(fs.existsSync(old)).to.equal(false);
      expect(fs.existsSync(fresh)).to.equal(true);
      expect(fs.existsSync(other)).to.equal(true);
    } finally {
      for (const f of [old, fresh, other]) fs.rmSync(f, { force: true });
    }
  });
});
