import zlib from 'zlib';

/**
 * A segment of a verbose_json transcription, every field OpenAI's document (TranscriptionSegment)
 * requires, typed as it says: `id`, `seek` and `tokens` integers, the rest numbers and text.
 */
export interface TranscriptSegment {
  id: number;
  seek: number;
  start: number;
  end: number;
  text: string;
  tokens: number[];
  temperature: number;
  avg_logprob: number;
  compression_ratio: number;
  no_speech_prob: number;
}

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
}

export const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Whisper's own measure (openai/whisper `compression_ratio`): UTF-8 bytes of the text over their zlib-compressed length. */
export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length / zlib.deflateSync(bytes).length;
}

/**
 * One backend segment, completed (docs/audio.md, "Responses"). Only start, end and text are needed;
 * what a backend leaves out (whisper.cpp's server sends no seek, compression_ratio or
 * no_speech_prob, others send only start, end and text) or sends mistyped (null, a NaN written as
 * null, a fractional seek) is filled: `id` the segment's index, `seek` the start in Whisper's 10 ms
 * frames, `tokens` [], `temperature` the request's (else 0, OpenAI's default), `avg_logprob` 0,
 * `compression_ratio` computed from the text as Whisper does, `no_speech_prob` 0. Undefined when
 * start, end or text is missing: that answer is not a transcription.
 */
export function segmentOf(raw: unknown, index: number, temperature: number | undefined): TranscriptSegment | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const s = raw as Record<string, unknown>;
  if (!num(s.start) || !num(s.end) || typeof s.text !== 'string') return undefined;
  const tokens = Array.isArray(s.tokens) && s.tokens.every(Number.isSafeInteger) ? (s.tokens as number[]) : [];
  return {
    id: Number.isSafeInteger(s.id) ? (s.id as number) : index,
    seek: Number.isSafeInteger(s.seek) && (s.seek as number) >= 0 ? (s.seek as number) : Math.max(0, Math.floor(s.start * 100)),
    start: s.start,
    end: s.end,
    text: s.text,
    tokens,
    temperature: num(s.temperature) ? s.temperature : (temperature ?? 0),
    avg_logprob: num(s.avg_logprob) ? s.avg_logprob : 0,
    compression_ratio: num(s.compression_ratio) ? s.compression_ratio : compressionRatio(s.text),
    no_speech_prob: num(s.no_speech_prob) ? s.no_speech_prob : 0,
  };
}

export function wordOf(raw: unknown): TranscriptWord | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const w = raw as Record<string, unknown>;
  return typeof w.word === 'string' && num(w.start) && num(w.end) ? { word: w.word, start: w.start, end: w.end } : undefined;
}

/**
 * The words of an answer: its top-level `words` (OpenAI, faster-whisper servers), else the words
 * inside its segments (whisper.cpp's server puts them there, one per token, with the token's
 * leading space: trimmed, and blank ones skipped). Undefined when one is malformed.
 */
export function wordsOf(r: Record<string, unknown>, segments: unknown[]): TranscriptWord[] | undefined {
  const nested = !Array.isArray(r.words);
  const raw = nested ? segments.flatMap((s) => (s && typeof s === 'object' && Array.isArray((s as { words?: unknown }).words) ? (s as { words: unknown[] }).words : [])) : (r.words as unknown[]);
  const words = raw.map(wordOf);
  if (words.some((w) => !w)) return undefined;
  const out = words as TranscriptWord[];
  return nested ? out.map((w) => ({ ...w, word: w.word.trim() })).filter((w) => w.word !== '') : out;
}
