import type { Response } from 'express';
import type { Transcript } from '../../../shared/audio/transcript';
import type { ResponseFormat } from './parts';

/** Seconds of audio billed, as OpenAI's `usage: {type: 'duration'}` reports it; none when speech-free. */
function usageOf(t: Transcript) {
  return t.duration > 0 ? { usage: { type: 'duration' as const, seconds: Math.round(t.duration * 1000) / 1000 } } : {};
}

/** The body of each response format. `text` is the raw transcript. */
export function renderTranscript(t: Transcript, format: ResponseFormat): { contentType: string; body: string } {
  if (format === 'text') return { contentType: 'text/plain; charset=utf-8', body: t.text };
  const obj =
    format === 'json'
      ? { text: t.text, ...usageOf(t) }
      : {
          task: 'transcribe',
          language: t.language,
          duration: t.duration,
          text: t.text,
          segments: t.segments,
          ...(t.words ? { words: t.words } : {}),
          ...usageOf(t),
        };
  return { contentType: 'application/json', body: JSON.stringify(obj) };
}

/** One buffered answer with Content-Length (never chunked): time to first byte is the total time. */
export function sendTranscript(res: Response, t: Transcript, format: ResponseFormat): void {
  const { contentType, body } = renderTranscript(t, format);
  const buf = Buffer.from(body, 'utf8');
  res.status(200).setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', String(buf.length));
  res.end(buf);
}
