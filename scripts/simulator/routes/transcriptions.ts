import crypto from 'crypto';
import { Router, type Request, type Response } from 'express';
import multer from 'multer';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults } from '../faults';
import { analyseWav, round, type SoundRegion } from '../audio';

/** What the simulated model "hears": distinctive words, chosen deterministically from the audio. */
const VOCABULARY = (
  'amber lantern quartz meadow harbor velvet cobalt thistle juniper falcon orchard granite saffron ' +
  'willow ember cascade marble tundra sparrow canyon indigo pebble lagoon summit beacon clover ' +
  'driftwood fennel glacier hazel ivory kestrel larch mosaic nutmeg opal prairie quill russet'
).split(' ');
const WORDS_PER_SECOND = 2.5;
const LANGUAGES: Record<string, string> = { en: 'english', fr: 'french', de: 'german', es: 'spanish', it: 'italian', pt: 'portuguese', nl: 'dutch', ja: 'japanese', zh: 'chinese' };

function pick(seed: string): number {
  return crypto.createHash('sha256').update(seed).digest().readUInt32BE(0);
}

interface Word {
  word: string;
  start: number;
  end: number;
}

/** Words spread evenly over a region with sound, each ending a little before the next starts. */
function wordsOf(region: SoundRegion, index: number): Word[] {
  const len = region.end - region.start;
  const n = Math.max(1, Math.round(len * WORDS_PER_SECOND));
  const slot = len / n;
  return Array.from({ length: n }, (_, i) => ({
    word: VOCABULARY[pick(`${index}:${i}:${Math.round(region.rms * 100)}:${Math.round(len * 10)}`) % VOCABULARY.length],
    start: round(region.start + i * slot),
    end: round(region.start + (i + 0.85) * slot),
  }));
}

const stamp = (s: number, sep: string) => {
  const ms = Math.round(s * 1000);
  const p = (v: number, w = 2) => String(v).padStart(w, '0');
  return `${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)}${sep}${p(ms % 1000, 3)}`;
};

const invalid = (res: Response, status: number, message: string, param: string | null = null, code: string | null = null) =>
  res.status(status).json({ error: { message, type: 'invalid_request_error', param, code } });

/**
 * Models that answer like OpenAI's gpt-4o-transcribe family: `json` and `text` only; any other
 * format is refused with OpenAI's own answer (400 `unsupported_value`, `param: "response_format"`).
 */
const JSON_ONLY_MODELS = new Set(['sim-4o-transcribe-1']);

/**
 * OpenAI's `POST /v1/audio/transcriptions`: reads a real WAV, measures its duration, finds the
 * sound between pauses by energy and "transcribes" each stretch of sound as a segment of
 * deterministic words. Silence gives an empty text. Formats json, text, srt, vtt, verbose_json
 * (segments; words with `timestamp_granularities[]=word`). Other audio formats are refused.
 */
export function transcriptionRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: 25 * 1024 * 1024 } }).single('file');
  r.post('/v1/audio/transcriptions', (req: Request, res: Response) => {
    upload(req, res, async (err?: unknown) => {
      if (err) return invalid(res, (err as { code?: string }).code === 'LIMIT_FILE_SIZE' ? 413 : 400, 'Could not parse multipart form.');
      const body = (req.body ?? {}) as Record<string, unknown>;
      const entry = log.record(req, res);
      const granularities = ([] as unknown[]).concat(body.timestamp_granularities ?? body['timestamp_granularities[]'] ?? []).map(String);
      entry.body = { ...body, file: req.file ? { name: req.file.originalname, type: req.file.mimetype, bytes: req.file.size } : undefined };
      const model = String(body.model ?? '');
      if (await applyFaults(knobs.take(model), res)) return;
      if (!req.file) return invalid(res, 400, "Missing required parameter: 'file'.", 'file');
      if (!model) return invalid(res, 400, "Missing required parameter: 'model'.", 'model');
      const format = String(body.response_format ?? 'json');
      if (!['json', 'text', 'srt', 'vtt', 'verbose_json'].includes(format)) return invalid(res, 400, 'Invalid response_format.', 'response_format');
      if (JSON_ONLY_MODELS.has(model) && format !== 'json' && format !== 'text') {
        return invalid(res, 400, `response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text' instead.`, 'response_format', 'unsupported_value');
      }
      const audio = analyseWav(req.file.buffer);
      if (!audio) return invalid(res, 400, "Invalid file format. Supported formats: ['wav']", 'file');

      const words = audio.regions.map(wordsOf);
      const temperature = Number(body.temperature ?? 0) || 0;
      const segments = audio.regions.map((region, i) => {
        const text = ` ${words[i].map((w) => w.word).join(' ')}`;
        return {
          id: i,
          seek: Math.floor(region.start * 100),
          start: region.start,
          end: region.end,
          text,
          tokens: words[i].map((w) => 1000 + VOCABULARY.indexOf(w.word)),
          temperature,
          avg_logprob: -0.2,
          compression_ratio: 1.1,
          no_speech_prob: 0.01,
        };
      });
      const text = segments.map((s) => s.text).join('').trim();
      const lang = typeof body.language === 'string' ? body.language : 'en';
      const usage = { type: 'duration', seconds: Math.ceil(audio.duration) };

      if (format === 'text') return res.type('text/plain; charset=utf-8').send(text);
      if (format === 'srt' || format === 'vtt') {
        const sep = format === 'srt' ? ',' : '.';
        const cues = segments.map((s, i) => `${format === 'srt' ? `${i + 1}\n` : ''}${stamp(s.start, sep)} --> ${stamp(s.end, sep)}\n${s.text.trim()}\n`);
        return res.type('text/plain; charset=utf-8').send(`${format === 'vtt' ? 'WEBVTT\n\n' : ''}${cues.join('\n')}`);
      }
      if (format === 'json') return res.json({ text, usage });
      res.json({
        task: 'transcribe',
        language: LANGUAGES[lang] ?? lang,
        duration: audio.duration,
        text,
        ...(granularities.length === 0 || granularities.includes('segment') ? { segments } : {}),
        ...(granularities.includes('word') ? { words: words.flat() } : {}),
        usage,
      });
    });
  });
  return r;
}
