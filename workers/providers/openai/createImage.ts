import { openaiApi, openaiEndpoint, type OpenAiEndpoint } from './api';
import { fetchUpstream } from '../http';
import { imagesFromResponse, upstreamFields, type UpstreamImages } from './images';
import type { UpstreamCall } from '../types';

/**
 * `POST /images/generations` on an OpenAI-compatible upstream. The body is the validated request
 * with the upstream model name; images always come back as bytes (`b64_json`) so the gateway can
 * store them, unless the model's config says its upstream rejects `response_format` (GPT image
 * models answer b64_json anyway).
 */
export async function createImage(call: UpstreamCall, body: Record<string, unknown>, sendResponseFormat = true, endpoint: OpenAiEndpoint = openaiEndpoint): Promise<UpstreamImages> {
  const res = await fetchUpstream(
    endpoint.url(call, openaiApi.paths.images),
    { method: 'POST', headers: endpoint.headers(call), body: JSON.stringify(upstreamFields(call, body, sendResponseFormat)) },
    { signal: call.signal, deadline: call.deadline },
  );
  return imagesFromResponse(res, call);
}
