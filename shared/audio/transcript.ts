import { decrypt, encrypt } from '../crypto';

export interface TranscriptSegment {
  id: number;
  seek?: number;
  start: number;
  end: number;
  text: string;
  tokens?: number[];
  temperature?: number;
  avg_logprob?: number;
  compression_ratio?: number;
  no_speech_prob?: number;
}

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
}

/** A transcription as the worker hands it to the pod; the pod renders the caller's format. */
export interface Transcript {
  language: string;
  /** Seconds, as the backend measured it; 0 when no speech was detected. */
  duration: number;
  text: string;
  segments: TranscriptSegment[];
  /** Present only when word timestamps were asked for. */
  words?: TranscriptWord[];
}

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const OPTIONAL_SEGMENT_NUMBERS = ['seek', 'temperature', 'avg_logprob', 'compression_ratio', 'no_speech_prob'] as const;

function segmentOf(raw: unknown, index: number): TranscriptSegment | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const s = raw as Record<string, unknown>;
  if (!num(s.start) || !num(s.end) || typeof s.text !== 'string') return undefined;
  const out: TranscriptSegment = { id: Number.isInteger(s.id) ? (s.id as number) : index, start: s.start, end: s.end, text: s.text };
  for (const k of OPTIONAL_SEGMENT_NUMBERS) if (num(s[k])) out[k] = s[k] as number;
  if (Array.isArray(s.tokens) && s.tokens.every(Number.isInteger)) out.tokens = s.tokens as number[];
  return out;
}

function wordOf(raw: unknown): TranscriptWord | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const w = raw as Record<string, unknown>;
  return typeof w.word === 'string' && num(w.start) && num(w.end) ? { word: w.word, start: w.start, end: w.end } : undefined;
}

/**
 * Reads a backend's verbose_json answer. Undefined when it is not one (no text, no duration,
 * malformed segments or words). Fields the gateway does not publish are dropped.
 */
export function parseVerboseJson(raw: unknown, wantWords: boolean): Transcript | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  if (typeof r.text !== 'string' || !num(r.duration) || r.duration < 0) return undefined;
  const segments = (Array.isArray(r.segments) ? r.segments : []).map(segmentOf);
  if (segments.some((s) => !s)) return undefined;
  const t: Transcript = {
    language: typeof r.language === 'string' && r.language ? r.language : 'unknown',
    duration: r.duration,
    text: r.text,
    segments: segments as TranscriptSegment[],
  };
  if (wantWords) {
    const words = (Array.isArray(r.words) ? r.words : []).map(wordOf);
    if (words.some((w) => !w)) return undefined;
    t.words = words as TranscriptWord[];
  }
  return t;
}

/** No detectable speech: empty text, zero segments (and words), duration 0. Never metered. */
export function isSpeechFree(t: Transcript): boolean {
  return t.text.trim() === '';
}

export function speechFree(t: Transcript): Transcript {
  return { language: t.language, duration: 0, text: '', segments: [], ...(t.words ? { words: [] } : {}) };
}

/**
 * The transcript crosses Redis (pub/sub and the job's return value, kept briefly for reply
 * recovery) sealed with the gateway's secret, so nothing readable of it rests in Redis.
 */
export function sealTranscript(t: Transcript): { sealed: string } {
  return { sealed: encrypt(JSON.stringify(t)) };
}

export function unsealTranscript(result: unknown): Transcript {
  const sealed = (result as { sealed?: unknown } | null)?.sealed;
  if (typeof sealed !== 'string') throw new Error('audio job returned no sealed transcript');
  return JSON.parse(decrypt(sealed)) as Transcript;
}
