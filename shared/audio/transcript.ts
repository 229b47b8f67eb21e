import { decrypt, encrypt } from '../crypto';
import { num, segmentOf, wordsOf, type TranscriptSegment, type TranscriptWord } from './segments';

export type { TranscriptSegment, TranscriptWord };

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

/**
 * Reads a backend's verbose_json answer. Undefined when it is not one (no text, no duration,
 * malformed segments or words). Fields the gateway does not publish are dropped; segments are
 * completed to OpenAI's required fields (`segmentOf`), `temperature` being the request's.
 */
export function parseVerboseJson(raw: unknown, wantWords: boolean, temperature?: number): Transcript | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  if (typeof r.text !== 'string' || !num(r.duration) || r.duration < 0) return undefined;
  const rawSegments: unknown[] = Array.isArray(r.segments) ? r.segments : [];
  const segments = rawSegments.map((s, i) => segmentOf(s, i, temperature));
  if (segments.some((s) => !s)) return undefined;
  const t: Transcript = {
    language: typeof r.language === 'string' && r.language ? r.language : 'unknown',
    duration: r.duration,
    text: r.text,
    segments: segments as TranscriptSegment[],
  };
  if (wantWords) {
    const words = wordsOf(r, rawSegments);
    if (!words) return undefined;
    t.words = words;
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
