import { fetchUpstream, type UpstreamResponse } from '../http';
import type { UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';

/**
 * The fields sent upstream: the request's, the upstream model name, and `response_format: b64_json`
 * so images come back as bytes, unless the model's upstream rejects that field (then it is dropped).
 */
export function upstreamFields(call: UpstreamCall, fields: Record<string, unknown>, sendResponseFormat: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields, model: call.upstreamModel };
  if (sendResponseFormat) out.response_format = 'b64_json';
  else delete out.response_format;
  return out;
}

/** Reads OpenAI's images response into bytes: `b64_json` items, or `url` items downloaded. */
export async function imagesFromResponse(res: UpstreamResponse, call: UpstreamCall): Promise<Buffer[]> {
  let json: { data?: Array<{ b64_json?: string; url?: string }> };
  try {
    json = (await res.json()) as typeof json;
  } catch {
    throw errors.upstreamError('The upstream answered with a malformed body.');
  }
  if (!json || !Array.isArray(json.data) || json.data.length === 0) throw errors.upstreamError('The upstream answered with no images.');
  const out: Buffer[] = [];
  for (const item of json.data) {
    if (typeof item?.b64_json === 'string') out.push(Buffer.from(item.b64_json, 'base64'));
    else if (typeof item?.url === 'string' && /^https?:\/\//.test(item.url)) {
      // The upstream's own CDN link (dall-e style); trusted like the upstream itself.
      const got = await fetchUpstream(item.url, { method: 'GET' }, { signal: call.signal, deadline: call.deadline });
      out.push(await got.bytes());
    } else throw errors.upstreamError('The upstream answered with an image item without data.');
  }
  return out;
}
