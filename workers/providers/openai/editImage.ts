import { FormData } from 'undici';
import { openaiApi, openaiEndpoint, type OpenAiEndpoint } from './api';
import { fetchUpstream } from '../http';
import { imagesFromResponse, upstreamFields, type UpstreamImages } from './images';
import type { UpstreamCall } from '../types';

export interface EditInput {
  bytes: Buffer;
  contentType: string;
  filename: string;
}

/**
 * `POST /images/edits` on an OpenAI-compatible upstream: OpenAI's multipart form, one `image` part
 * (or `image[]` parts for several), the `mask` part when there is one (CreateImageEditRequest: a PNG
 * applied to the first image), the other fields as text parts.
 */
export async function editImage(
  call: UpstreamCall,
  fields: Record<string, unknown>,
  images: EditInput[],
  sendResponseFormat = true,
  mask?: EditInput,
  endpoint: OpenAiEndpoint = openaiEndpoint,
): Promise<UpstreamImages> {
  const form = new FormData();
  for (const [k, v] of Object.entries(upstreamFields(call, fields, sendResponseFormat))) {
    if (v !== undefined && v !== null) form.append(k, String(v));
  }
  const part = images.length > 1 ? 'image[]' : 'image';
  for (const img of images) form.append(part, new Blob([img.bytes], { type: img.contentType }), img.filename);
  if (mask) form.append('mask', new Blob([mask.bytes], { type: mask.contentType }), mask.filename);
  const res = await fetchUpstream(
    endpoint.url(call, openaiApi.paths.imageEdits),
    { method: 'POST', headers: endpoint.headers(call, true), body: form },
    { signal: call.signal, deadline: call.deadline },
  );
  return imagesFromResponse(res, call);
}
