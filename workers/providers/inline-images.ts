import { guardedFetch, GuardedFetchError } from '../../shared/net/ssrf';
import { ApiError } from '../../shared/errors/ApiError';
import { config } from '../../shared/config/env';
import { realSignal, type CancelSignal } from '../../shared/cancel-source';
import { fetchTrust } from './fetch/page';

/**
 * Image URLs of a chat request, downloaded by the gateway and sent on as base64 data URLs, for a
 * deployment whose server would otherwise fetch them itself from inside the operator's network (vLLM,
 * Ollama, TGI...: `inline_image_urls`, shared/catalog/inline-images.ts). Each download goes through
 * the SSRF guard (shared/net/ssrf.ts: https only, public addresses, pinned connection, redirects
 * judged again, `IMAGE_UPLOAD_MAX_BYTES` per image, `IMAGE_FETCH_TIMEOUT_MS`), the bytes must be a
 * PNG, JPEG, GIF or WebP image (judged on the bytes, not the Content-Type), and all of a request's
 * downloads together are capped at `IMAGE_URL_INLINE_MAX_BYTES`. A refusal fails the request before
 * any upstream is called, with the codes a refused URL upload answers (docs/images.md). Data URLs
 * pass unchanged.
 */

/** The places a job's body carries an image URL, per operation: `chat` (canonical), `messages` (Anthropic-native). */
interface UrlSlot {
  url: string;
  /** Its place among the request's images (data URLs counted), from 1: what a refusal names. */
  n: number;
  /** Writes the data URL (chat) or the base64 source (messages) in place, on the copy being built. */
  set(mediaType: string, base64: string): void;
}

const isData = (url: string) => /^data:/i.test(url);

/** A canonical part's image URL (`image_url` as a string or `{url}`), or undefined when it is not an image part. */
function chatImageUrl(p: unknown): string | undefined {
  if (!p || typeof p !== 'object' || (p as { type?: unknown }).type !== 'image_url') return undefined;
  const iu = (p as { image_url?: unknown }).image_url;
  const url = typeof iu === 'string' ? iu : iu && typeof iu === 'object' ? (iu as { url?: unknown }).url : undefined;
  return typeof url === 'string' ? url : undefined;
}

/** An Anthropic image block's URL source, or undefined. */
function messagesImageUrl(b: unknown): string | undefined {
  if (!b || typeof b !== 'object' || (b as { type?: unknown }).type !== 'image') return undefined;
  const src = (b as { source?: unknown }).source as { type?: unknown; url?: unknown } | undefined;
  return src && src.type === 'url' && typeof src.url === 'string' ? src.url : undefined;
}

/** Calls `fn` on each content block array of the body's messages (an Anthropic tool result's own blocks too). */
function eachBlocks(operation: string, body: Record<string, unknown>, fn: (blocks: unknown[]) => void): void {
  const messages = body.messages;
  if ((operation !== 'chat' && operation !== 'messages') || !Array.isArray(messages)) return;
  const visit = (blocks: unknown[]) => {
    fn(blocks);
    // an Anthropic tool result carries its own content blocks (images among them)
    if (operation === 'messages') for (const b of blocks) if (b && typeof b === 'object' && (b as { type?: unknown }).type === 'tool_result' && Array.isArray((b as { content?: unknown }).content)) visit((b as { content: unknown[] }).content);
  };
  for (const m of messages) {
    const content = m && typeof m === 'object' ? (m as { content?: unknown }).content : undefined;
    if (Array.isArray(content)) visit(content);
  }
}

/** Whether the body names an image by a URL that is not a data URL (a scan that allocates nothing). */
export function hasImageUrls(operation: string, body: Record<string, unknown>): boolean {
  const urlOf = operation === 'chat' ? chatImageUrl : messagesImageUrl;
  let found = false;
  eachBlocks(operation, body, (blocks) => {
    for (const b of blocks) {
      const url = urlOf(b);
      if (url !== undefined && !isData(url)) found = true;
    }
  });
  return found;
}

/**
 * A copy of the body in which every message, block array and image block on the way to an image URL
 * is a copy of its own (the job's body is left as it is: a deployment that does not inline gets it),
 * and a slot per image URL that writes the copy's block.
 */
function copyWithSlots(operation: string, body: Record<string, unknown>): { body: Record<string, unknown>; slots: UrlSlot[] } {
  const urlOf = operation === 'chat' ? chatImageUrl : messagesImageUrl;
  const slots: UrlSlot[] = [];
  let n = 0;
  const blocks = (content: unknown[]): unknown[] =>
    content.map((p) => {
      const url = urlOf(p);
      if (url !== undefined) n++;
      if (url !== undefined && !isData(url)) {
        const out = Object.assign({}, p) as Record<string, unknown>;
        slots.push({
          url,
          n,
          set(mediaType, b64) {
            if (operation === 'chat') {
              const iu = out.image_url;
              const dataUrl = `data:${mediaType};base64,${b64}`;
              out.image_url = typeof iu === 'string' ? dataUrl : Object.assign({}, iu, { url: dataUrl });
            } else {
              out.source = { type: 'base64', media_type: mediaType, data: b64 };
            }
          },
        });
        return out;
      }
      if (operation === 'messages' && p && typeof p === 'object' && (p as { type?: unknown }).type === 'tool_result' && Array.isArray((p as { content?: unknown }).content)) {
        return Object.assign({}, p, { content: blocks((p as { content: unknown[] }).content) });
      }
      return p;
    });
  const messages = (body.messages as unknown[]).map((m) => {
    const content = m && typeof m === 'object' ? (m as { content?: unknown }).content : undefined;
    return Array.isArray(content) ? Object.assign({}, m, { content: blocks(content) }) : m;
  });
  return { body: Object.assign({}, body, { messages }), slots };
}

/** The image type the bytes are, from their signature; undefined for anything else. */
export function sniffImageType(b: Buffer): string | undefined {
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6))) return 'image/gif';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

/** Which of the request's images a refusal is about (the 1st, 2nd, ... image, in the order of its messages). */
function nth(n: number, err: ApiError): ApiError {
  return new ApiError(err.status, err.code, `Image ${n} of the request: ${err.message}`, { headers: err.headers, details: err.details });
}

/** Downloads one URL through the guard; refusals as the URL upload's codes (url_not_allowed, image_fetch_failed, image_too_large). */
async function download(url: string, maxBytes: number, timeoutMs: number, signal: AbortSignal): Promise<Buffer> {
  try {
    const got = await guardedFetch(url, {
      maxBytes,
      timeoutMs,
      signal,
      accept: 'image/png, image/jpeg, image/webp, image/gif',
      ...fetchTrust(),
    });
    return got.body;
  } catch (err) {
    if (signal.aborted) throw signal.reason ?? err;
    if (!(err instanceof GuardedFetchError)) throw err;
    if (err.kind === 'not_allowed') throw new ApiError(400, 'url_not_allowed', err.message);
    if (err.kind === 'too_large') throw new ApiError(413, 'image_too_large', `The image is larger than ${maxBytes} bytes.`);
    throw new ApiError(400, 'image_fetch_failed', err.message);
  }
}

/**
 * The body with every image URL that is not a data URL replaced by the data URL of its bytes,
 * downloaded one at a time (a request holds at most its cap in memory); the same URL twice is
 * downloaded once. Throws the refusal of the first URL refused (which names its place in the request).
 */
export async function inlineImageUrls(operation: string, body: Record<string, unknown>, cancel: CancelSignal, deadline: number): Promise<Record<string, unknown>> {
  const cfg = config();
  const signal = realSignal(cancel);
  const { body: copy, slots } = copyWithSlots(operation, body);
  const done = new Map<string, { mediaType: string; b64: string }>();
  let total = 0;
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i];
    let got = done.get(slot.url);
    if (!got) {
      if (signal.aborted) throw signal.reason;
      const timeoutMs = Math.max(1, Math.min(cfg.imageFetchTimeoutMs, deadline - Date.now()));
      const room = cfg.imageUrlInlineMaxBytes - total;
      let bytes: Buffer;
      try {
        if (room <= 0) throw new ApiError(413, 'image_too_large', `The request's images by URL add up to more than ${cfg.imageUrlInlineMaxBytes} bytes.`);
        bytes = await download(slot.url, Math.min(cfg.imageUploadMaxBytes, room), timeoutMs, signal);
      } catch (err) {
        if (err instanceof ApiError && err.code === 'image_too_large' && room < cfg.imageUploadMaxBytes) {
          throw nth(slot.n, new ApiError(413, 'image_too_large', `The request's images by URL add up to more than ${cfg.imageUrlInlineMaxBytes} bytes.`));
        }
        throw err instanceof ApiError ? nth(slot.n, err) : err;
      }
      total += bytes.length;
      const mediaType = sniffImageType(bytes);
      if (!mediaType) throw nth(slot.n, new ApiError(400, 'unsupported_image_type', 'The URL did not give a PNG, JPEG, GIF or WebP image.'));
      got = { mediaType, b64: bytes.toString('base64') };
      done.set(slot.url, got);
    }
    slot.set(got.mediaType, got.b64);
  }
  return copy;
}
