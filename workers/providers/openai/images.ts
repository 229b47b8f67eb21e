import type { UpstreamResponse } from '../http';
import { linkedImageBytes } from './image-link';
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

/**
 * An images answer: the bytes of each image with its `revised_prompt` (dall-e-3), and the top-level
 * fields GPT image models add (`usage`, `quality`, `background`), each only when the upstream sent it.
 */
export interface UpstreamImages {
  images: Array<{ bytes: Buffer; revisedPrompt?: string }>;
  usage?: Record<string, unknown>;
  quality?: string;
  background?: string;
}

type ImageItem = { b64_json?: unknown; url?: unknown; revised_prompt?: unknown };
type ImagesBody = { data?: ImageItem[]; usage?: unknown; quality?: unknown; background?: unknown };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Reads OpenAI's images response: `b64_json` items, or `url` items downloaded (image-link.ts), and the fields above. */
export async function imagesFromResponse(res: UpstreamResponse, call: UpstreamCall): Promise<UpstreamImages> {
  let json: ImagesBody;
  try {
    json = (await res.json()) as ImagesBody;
  } catch {
    throw errors.upstreamError('The upstream answered with a malformed body.');
  }
  if (!json || !Array.isArray(json.data) || json.data.length === 0) throw errors.upstreamError('The upstream answered with no images.');
  const images: UpstreamImages['images'] = [];
  for (const item of json.data) {
    let bytes: Buffer;
    if (typeof item?.b64_json === 'string') bytes = Buffer.from(item.b64_json, 'base64');
    // a link (dall-e style) goes through the SSRF guard: the upstream is not trusted to name addresses
    else if (typeof item?.url === 'string') bytes = await linkedImageBytes(item.url, call);
    else throw errors.upstreamError('The upstream answered with an image item without data.');
    images.push({ bytes, revisedPrompt: str(item.revised_prompt) });
  }
  const usage = json.usage && typeof json.usage === 'object' && !Array.isArray(json.usage) ? (json.usage as Record<string, unknown>) : undefined;
  return { images, usage, quality: str(json.quality), background: str(json.background) };
}
