import { FormData } from 'undici';
import fs from 'fs';
import { openaiApi, openaiEndpoint, type OpenAiEndpoint } from './api';
import { failureInfo, fetchUpstream, noted, UpstreamRefusal } from '../http';
import type { UpstreamCall } from '../types';
import { ApiError } from '../../../shared/errors/ApiError';
import { audioErrors } from '../../../shared/audio/errors';
import { parseVerboseJson, type Transcript } from '../../../shared/audio/transcript';
import type { CancelSignal } from '../../../shared/cancel-source';

export interface TranscriptionInput {
  /** The spool file; streamed from disk, never read whole into memory. */
  path: string;
  /** What the upstream sees as the filename: `audio.<ext>` (OpenAI infers the format from it). */
  uploadName: string;
  contentType: string;
  language?: string;
  prompt?: string;
  temperature?: number;
  words: boolean;
}

/**
 * Gateway errors from a failed upstream call; fixed messages, never the upstream's own words. The
 * call's failure (status, Retry-After) stays noted on the error, for the pool's router (workers/routing).
 */
function audioFailure(err: unknown, signal: CancelSignal): unknown {
  if (signal.aborted) return err;
  const info = failureInfo(err);
  const mapped = audioError(err);
  return info && typeof mapped === 'object' && mapped !== null ? noted(mapped, info) : mapped;
}

/**
 * The fields the gateway itself always sends (whatever the caller asked): an upstream refusing one of
 * them (OpenAI's 400 `unsupported_value`, `param: "response_format"`: "response_format 'verbose_json'
 * is not compatible with model 'gpt-4o-transcribe'") cannot be served by this upstream model at all.
 */
const GATEWAY_FIELDS = new Set(['response_format', 'timestamp_granularities', 'timestamp_granularities[]']);

function audioError(err: unknown): unknown {
  if (!(err instanceof ApiError)) return audioErrors.backendUnavailable();
  switch (err.code) {
    case 'upstream_rate_limited':
      return audioErrors.backendRateLimited(Number(err.headers['Retry-After'] ?? 1));
    case 'deadline_exceeded':
      return audioErrors.deadline();
    case 'upstream_invalid_request':
      // a 404: the backend has no such model or deployment (the operator's configuration, not the file)
      if (err instanceof UpstreamRefusal && err.upstreamStatus === 404) return audioErrors.backendUnavailable('The audio backend does not serve the configured model.');
      // a refusal of a field only the gateway sets (the upstream model does not answer verbose_json with
      // timestamps, as OpenAI's gpt-4o-transcribe family): the catalog's configuration, not the caller's file
      if (err instanceof UpstreamRefusal && err.upstreamParam !== undefined && GATEWAY_FIELDS.has(err.upstreamParam)) {
        return audioErrors.backendUnavailable('The audio backend does not answer verbose_json with timestamps, which this gateway needs (the model is misconfigured).');
      }
      return audioErrors.invalidRequest('The audio backend could not read the file (unsupported or corrupt audio).');
    default:
      return audioErrors.backendUnavailable();
  }
}

/**
 * OpenAI's transcription API (also whisper.cpp's server and faster-whisper servers): a multipart
 * upload, the file part streamed from disk. The upstream is always asked for `verbose_json`, the
 * one format that reports the duration the gateway meters and limits; the caller's format is
 * rendered by the pod. Segment timestamps always, word timestamps when asked.
 */
export async function createTranscription(call: UpstreamCall, input: TranscriptionInput, endpoint: OpenAiEndpoint = openaiEndpoint): Promise<Transcript> {
  const form = new FormData();
  form.append('file', await fs.openAsBlob(input.path, { type: input.contentType }), input.uploadName);
  form.append('model', call.upstreamModel);
  form.append('response_format', 'verbose_json');
  if (input.language) form.append('language', input.language);
  if (input.prompt) form.append('prompt', input.prompt);
  if (input.temperature !== undefined) form.append('temperature', String(input.temperature));
  form.append('timestamp_granularities[]', 'segment');
  if (input.words) form.append('timestamp_granularities[]', 'word');

  let raw: string;
  try {
    const res = await fetchUpstream(
      endpoint.url(call, openaiApi.paths.transcriptions),
      { method: 'POST', headers: endpoint.headers(call, true), body: form },
      { signal: call.signal, deadline: call.deadline, retries: call.retries },
    );
    raw = await res.text();
  } catch (err) {
    throw audioFailure(err, call.signal);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw audioErrors.backendUnavailable('The audio backend answered with a malformed body.');
  }
  const transcript = parseVerboseJson(json, input.words, input.temperature);
  if (!transcript) throw audioErrors.backendUnavailable('The audio backend answered without a usable transcription.');
  return transcript;
}
