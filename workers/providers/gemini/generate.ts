import { geminiApi, type GeminiMethod } from './api';
import { fetchUpstream, type UpstreamResponse } from '../http';
import { readSse } from '../sse';
import type { UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';
import { candidateIndex, wellFormedResponse, type GeminiResponse } from './from-gemini';
import { isRecord } from '../../../shared/is-record';
import { googleErrorHints } from './errors';

/**
 * One POST to a model method of the Gemini API; returns the raw response. The call's retry policy
 * and first-byte limit (a model pool's: its router retries) apply as to every upstream.
 */
export function postGemini(call: UpstreamCall, method: GeminiMethod, body: Record<string, unknown>): Promise<UpstreamResponse> {
  return fetchUpstream(
    geminiApi.url(call.baseUrl, call.upstreamModel, method),
    { method: 'POST', headers: geminiApi.headers(call.apiKey), body: JSON.stringify(body) },
    { signal: call.signal, deadline: call.deadline, callerKey: call.callerKey, retries: call.retries, firstByteTimeoutMs: call.firstByteTimeoutMs, errorHints: googleErrorHints, conversation: true },
  );
}

/**
 * Whether the stream has finished, event by event: a prompt blocked (no candidates), or each of the
 * `candidates` asked for (`candidateCount`) has had its finishReason, in this event or an earlier one.
 */
function finishedAfter(candidates: number): (r: GeminiResponse) => boolean {
  const done = new Set<number>();
  return (r) => {
    if (!r.candidates?.length) return !!r.promptFeedback?.blockReason;
    r.candidates.forEach((c, at) => c.finishReason && done.add(candidateIndex(c, at)));
    return done.size >= candidates;
  };
}

type StreamData = GeminiResponse & { error?: { message?: string; status?: string; details?: unknown } };

function parse(data: string): StreamData {
  try {
    const v = JSON.parse(data) as unknown;
    // valid JSON of another shape (`null`, a part that is not an object) is as malformed; an in-band error is read as such
    if (isRecord(v) && (isRecord(v.error) || wellFormedResponse(v))) return v as StreamData;
  } catch {
    /* below */
  }
  throw errors.upstreamError('The upstream sent a malformed stream event.');
}

/**
 * Reads a `streamGenerateContent?alt=sse` body: each event's data is a GenerateContentResponse,
 * there is no terminating sentinel, and the chunk carrying the finishReason of the last of the
 * `candidates` asked for is the last one. An in-band `{error}` ends the stream with the gateway's error.
 */
export async function* geminiEvents(res: UpstreamResponse, candidates = 1): AsyncGenerator<GeminiResponse> {
  if (!res.body) throw errors.upstreamError('The upstream sent no stream.');
  const finished = finishedAfter(candidates);
  const last = (e: { data: string }) => {
    const v = parse(e.data);
    return !!v.error || finished(v);
  };
  for await (const ev of readSse(res.body, last)) {
    const data = parse(ev.data);
    if (data.error) {
      const msg = `Upstream stream error: ${data.error.message ?? 'unknown'}`.slice(0, 500);
      if (data.error.status === 'UNAVAILABLE') throw errors.upstreamUnavailable(msg);
      if (data.error.status === 'RESOURCE_EXHAUSTED') throw errors.upstreamRateLimited(Math.ceil((googleErrorHints(429, data).retryAfterMs ?? 1000) / 1000));
      throw errors.upstreamError(msg);
    }
    yield data;
  }
}
