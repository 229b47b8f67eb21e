import { fetchImage } from '../../shared/images/fetch-image';
import { ApiError } from '../../shared/errors/ApiError';
import { config } from '../../shared/config/env';
import { realSignal, type CancelSignal } from '../../shared/cancel-source';

/**
 * Image URLs of a chat request, downloaded by the gateway and sent on as base64 data URLs, for a
 * deployment whose server would otherwise fetch them itself from inside the operator's network (vLLM,
 * Ollama, TGI...: `inline_image_urls`, shared/catalog/inline-images.ts). Each download goes through
 * the SSRF guard (shared/net/ssrf.ts: https only, public addresses, pinned connection, redirects
 * judged again, `IMAGE_UPLOAD_MAX_BYTES` per image, `IMAGE_FETCH_TIMEOUT_MS`), the bytes must be a
 * PNG, JPEG, GIF or WebP image (judged on the bytes, not the Content-Type), and all of a request's
 * downloads together are capped at `IMAGE_URL_INLINE_MAX_BYTES`. A refusal fails the request before
 * any upstream is called, with the codes a refused URL upload answers (docs/images.md), and so do
 * all of a request's downloads past `IMAGE_URL_INLINE_TIMEOUT_MS` together. Data URLs pass unchanged.
 * An image is what such a server fetches as one (a chat part's `image_url` whatever its `type`; a
 * messages image block with a URL source, nested ones too); other media by URL (vLLM's `audio_url`,
 * `video_url`, a file or document by URL) are refused (400 `url_not_allowed`, naming the field).
 */

/** The places a job's body carries an image URL, per operation: `chat` (canonical), `messages` (Anthropic-native). */
interface UrlSlot {
  url: string;
  /** Its place among the request's images (data URLs counted), from 1: what a refusal names. */
  n: number;
  /** Writes the data URL (chat) or the base64 source (messages) in place, on the copy being built. */
  set(mediaType: string, base64: string): void;
}

/** Media other than an image named by a URL that is not a data URL: refused for a deployment that inlines (the gateway downloads images only). */
interface MediaUrl {
  /** "A video", "An audio clip", "A document", ... */
  what: string;
  /** Where it is, as the request's field (`messages[0].content[1].video_url`). */
  param: string;
}

const isData = (url: string) => /^data:/i.test(url);

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A URL written as a string or as `{url}` (OpenAI's `image_url`, vLLM's `audio_url`, `video_url`). */
function urlIn(v: unknown): string | undefined {
  const url = typeof v === 'string' ? v : isObj(v) ? v.url : undefined;
  return typeof url === 'string' ? url : undefined;
}

/**
 * A canonical part's image URL: its `image_url` (a string or `{url}`) whatever the part's `type` says.
 * vLLM fetches the `image_url` of an `image_url` part, the string `image_url` of an `input_image` part
 * (its MM_PARSER_MAP reads the Responses shape on chat completions too), and that of a part with no
 * `type` or with a `uuid`; a part of another type carrying one is inlined all the same (harmless).
 */
function chatImageUrl(p: unknown): string | undefined {
  return isObj(p) && 'image_url' in p ? urlIn(p.image_url) : undefined;
}

/**
 * The fields of a canonical part that name other media by URL, which a server the operator runs may
 * fetch: vLLM's `audio_url` and `video_url` parts (a string or `{url}`), a `file` part's `file_data`
 * and a `file_url` (an Anthropic-shaped upstream gets a document URL source from them; a proxy may
 * fetch them). The first one that is not a data URL, or undefined.
 */
function chatMediaUrl(p: unknown, at: string): MediaUrl | undefined {
  if (!isObj(p)) return undefined;
  const fields: Array<[string, unknown, string]> = [
    ['audio_url', urlIn(p.audio_url), 'An audio clip'],
    ['video_url', urlIn(p.video_url), 'A video'],
    ['file_url', typeof p.file_url === 'string' ? p.file_url : undefined, 'A file'],
    ['file.file_data', isObj(p.file) && typeof p.file.file_data === 'string' ? p.file.file_data : undefined, 'A file'],
    ['file.file_url', isObj(p.file) && typeof p.file.file_url === 'string' ? p.file.file_url : undefined, 'A file'],
  ];
  for (const [field, url, what] of fields) if (typeof url === 'string' && !isData(url)) return { what, param: `${at}.${field}` };
  return undefined;
}

/** An Anthropic block's URL source (`source: {type: "url", url}`), or undefined. */
function urlSource(b: Record<string, unknown>): string | undefined {
  const src = b.source;
  return isObj(src) && src.type === 'url' && typeof src.url === 'string' ? src.url : undefined;
}

/** What a job's body names by URL, as the walk meets it: an image (its URL; `write` on the copy being built, when copying), or other media. */
interface Visitor {
  /** An image's URL (data URLs too); returns the block's copy to write, when copying. */
  image(url: string, block: Record<string, unknown>): Record<string, unknown> | undefined;
  media(m: MediaUrl): void;
}

/**
 * Walks an Anthropic block array: each block with a URL source (an image's is an image, a document's
 * or any other block's is other media), and the blocks nested in a block's `content` (a tool result,
 * a server tool's result) and in a `content` document source (its image blocks). Returns the array
 * (a copy of it when `copying` and a block in it was copied), every block on the way to an image a copy of its own.
 */
function walkBlocks(blocks: unknown[], at: string, v: Visitor, copying: boolean): unknown[] {
  let out: unknown[] | undefined;
  blocks.forEach((b, i) => {
    const got = walkBlock(b, `${at}[${i}]`, v, copying);
    if (got !== b) (out ??= blocks.slice())[i] = got;
  });
  return out ?? blocks;
}

function walkBlock(b: unknown, at: string, v: Visitor, copying: boolean): unknown {
  if (!isObj(b)) return b;
  let out: Record<string, unknown> | undefined;
  const url = urlSource(b);
  if (url !== undefined) {
    if (b.type === 'image') out = v.image(url, b);
    else if (!isData(url)) v.media({ what: b.type === 'document' ? 'A document' : `A '${String(b.type)}' block`, param: `${at}.source.url` });
  }
  const content = b.content;
  if (Array.isArray(content) || isObj(content)) {
    const got = Array.isArray(content) ? walkBlocks(content, `${at}.content`, v, copying) : walkBlock(content, `${at}.content`, v, copying);
    if (got !== content) (out ??= Object.assign({}, b)).content = got;
  }
  const src = b.source;
  if (isObj(src) && Array.isArray(src.content)) {
    const got = walkBlocks(src.content, `${at}.source.content`, v, copying);
    if (got !== src.content) (out ??= Object.assign({}, b)).source = Object.assign({}, src, { content: got });
  }
  return copying && out ? out : b;
}

/**
 * Walks the body's messages: a canonical body's content parts (`chat`), an Anthropic body's blocks,
 * nested ones included (`messages`). Returns the body, a copy of it when `copying` and an image URL
 * was met (the job's body is left as it is: a deployment that does not inline gets it).
 */
function walk(operation: string, body: Record<string, unknown>, v: Visitor, copying: boolean): Record<string, unknown> {
  const messages = body.messages;
  if ((operation !== 'chat' && operation !== 'messages') || !Array.isArray(messages)) return body;
  let outMessages: unknown[] | undefined;
  messages.forEach((m, i) => {
    const content = isObj(m) ? m.content : undefined;
    if (!Array.isArray(content)) return;
    const at = `messages[${i}].content`;
    let got: unknown[];
    if (operation === 'messages') got = walkBlocks(content, at, v, copying);
    else {
      let parts: unknown[] | undefined;
      content.forEach((p, j) => {
        const url = chatImageUrl(p);
        const copy = url !== undefined ? v.image(url, p as Record<string, unknown>) : undefined;
        const media = chatMediaUrl(p, `${at}[${j}]`);
        if (media) v.media(media);
        if (copying && copy) (parts ??= content.slice())[j] = copy;
      });
      got = parts ?? content;
    }
    if (got !== content) (outMessages ??= messages.slice())[i] = Object.assign({}, m, { content: got });
  });
  return outMessages ? Object.assign({}, body, { messages: outMessages }) : body;
}

/** The first medium other than an image the body names by a URL (not a data URL), or undefined. */
function firstMediaUrl(operation: string, body: Record<string, unknown>): MediaUrl | undefined {
  let first: MediaUrl | undefined;
  walk(operation, body, { image: () => undefined, media: (m) => void (first ??= m) }, false);
  return first;
}

/**
 * Whether the body names an image by a URL that is not a data URL, or other media by URL (which a
 * deployment that inlines refuses): a walk that copies nothing.
 */
export function hasImageUrls(operation: string, body: Record<string, unknown>): boolean {
  let found = false;
  walk(operation, body, { image: (url) => void (found ||= !isData(url)), media: () => void (found = true) }, false);
  return found;
}

/**
 * A copy of the body in which every message, block array and image block on the way to an image URL
 * is a copy of its own (the job's body is left as it is: a deployment that does not inline gets it),
 * and a slot per image URL that writes the copy's block.
 */
function copyWithSlots(operation: string, body: Record<string, unknown>): { body: Record<string, unknown>; slots: UrlSlot[] } {
  const slots: UrlSlot[] = [];
  let n = 0;
  const copy = walk(
    operation,
    body,
    {
      image(url, block) {
        n++;
        if (isData(url)) return undefined;
        const out = Object.assign({}, block);
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
      },
      media: () => undefined,
    },
    true,
  );
  return { body: copy, slots };
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

/**
 * The body with every image URL that is not a data URL replaced by the data URL of its bytes,
 * downloaded one at a time (a request holds at most its cap in memory); the same URL twice is
 * downloaded once. Throws the refusal of the first URL refused (which names its place in the request).
 */
export async function inlineImageUrls(operation: string, body: Record<string, unknown>, cancel: CancelSignal, deadline: number): Promise<Record<string, unknown>> {
  const cfg = config();
  const signal = realSignal(cancel);
  // other media by URL is not downloaded: refused before any image is (docs/providers.md)
  const media = firstMediaUrl(operation, body);
  if (media) {
    throw new ApiError(400, 'url_not_allowed', `${media.what} by URL (\`${media.param}\`) is not sent to this model: the gateway downloads images only; send it as a base64 data URL.`, { param: media.param });
  }
  const { body: copy, slots } = copyWithSlots(operation, body);
  const done = new Map<string, { mediaType: string; b64: string }>();
  let total = 0;
  // all of the request's downloads share one time budget: a server trickling bytes to many URLs does not hold the job to its deadline
  const budgetEnd = Date.now() + cfg.imageUrlInlineTimeoutMs;
  const overTime = () => new ApiError(400, 'image_fetch_failed', `The request's images by URL took more than ${cfg.imageUrlInlineTimeoutMs} ms to download.`);
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i];
    let got = done.get(slot.url);
    if (!got) {
      if (signal.aborted) throw signal.reason;
      const budgetLeft = budgetEnd - Date.now();
      const timeoutMs = Math.max(1, Math.min(cfg.imageFetchTimeoutMs, deadline - Date.now(), budgetLeft));
      const room = cfg.imageUrlInlineMaxBytes - total;
      let bytes: Buffer;
      try {
        if (budgetLeft <= 0) throw overTime();
        if (room <= 0) throw new ApiError(413, 'image_too_large', `The request's images by URL add up to more than ${cfg.imageUrlInlineMaxBytes} bytes.`);
        bytes = await fetchImage(slot.url, { maxBytes: Math.min(cfg.imageUploadMaxBytes, room), timeoutMs, accept: 'image/png, image/jpeg, image/webp, image/gif', signal });
      } catch (err) {
        if (err instanceof ApiError && err.code === 'image_too_large' && room < cfg.imageUploadMaxBytes) {
          throw nth(slot.n, new ApiError(413, 'image_too_large', `The request's images by URL add up to more than ${cfg.imageUrlInlineMaxBytes} bytes.`));
        }
        if (err instanceof ApiError && err.code === 'image_fetch_failed' && Date.now() >= budgetEnd) throw nth(slot.n, overTime());
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
