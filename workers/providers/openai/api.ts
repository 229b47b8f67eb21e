import type { UpstreamCall } from '../types';
import type { ErrorHintReader } from '../http';

/** Where and how to call an OpenAI-compatible upstream (OpenAI, vLLM, Ollama, llama.cpp, TGI). */
export const openaiApi = {
  url(baseUrl: string, path: string): string {
    return `${baseUrl.replace(/\/+$/, '')}${path}`;
  },
  headers(apiKey?: string): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) h.authorization = `Bearer ${apiKey}`;
    return h;
  },
  /** Headers for a multipart upload: fetch sets the content type with its boundary. */
  uploadHeaders(apiKey?: string): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json' };
    if (apiKey) h.authorization = `Bearer ${apiKey}`;
    return h;
  },
  paths: {
    chat: '/chat/completions',
    completions: '/completions',
    embeddings: '/embeddings',
    images: '/images/generations',
    imageEdits: '/images/edits',
    transcriptions: '/audio/transcriptions',
  },
};

/**
 * Where one operation of an OpenAI-wire upstream is called and with which headers. The OpenAI
 * adapter's operations take one, so a kind that speaks OpenAI's bodies under other URLs and
 * headers (Azure OpenAI) reuses them with an endpoint of its own.
 */
export interface OpenAiEndpoint {
  url(call: UpstreamCall, path: string): string;
  /** JSON headers; `upload` drops the content type (a multipart body sets its own). */
  headers(call: UpstreamCall, upload?: boolean): Record<string, string>;
  /** What this service's error bodies say beyond their status (workers/providers/http.ts). */
  errorHints?: ErrorHintReader;
  /** Whether a stream may be sent `stream_options` (Azure's older API versions refuse it); yes when absent. */
  streamOptions?(call: UpstreamCall): boolean;
}

export const openaiEndpoint: OpenAiEndpoint = {
  url: (call, path) => openaiApi.url(call.baseUrl, path),
  headers: (call, upload) => (upload ? openaiApi.uploadHeaders(call.apiKey) : openaiApi.headers(call.apiKey)),
};
