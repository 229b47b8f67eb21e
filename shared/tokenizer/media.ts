import { inputAudioTokens } from './audio-duration';
import { withJsonKey } from '../merged';

/**
 * Images, binary documents and audio in a request's messages: a text tokenizer cannot read them, and
 * their base64 payload is no measure of what an upstream bills (a 300 KB image is about 270,000 tokens
 * of base64 text, while OpenAI bills at most about 1,100 tokens for it and Anthropic about 1,600; a
 * 10-second WAV clip is 427,000 characters of base64, over 50,000 tokens as text, and 100 audio tokens), so every count of a
 * request's input takes them out and adds an estimate each (docs/keys.md): a fixed one an image, a
 * document's by its size, an audio clip's by its duration (audio-duration.ts).
 */
export const IMAGE_TOKENS = 1600;
/** The largest `limits.image_tokens` the catalog takes (a model's own estimate of one image). */
export const MAX_IMAGE_TOKENS = 1_000_000;
export const DOCUMENT_TOKENS = 1600;

/**
 * Below this many characters of JSON, and without a part of a media type, a request holds no media
 * to take out: no second pass. A part by URL is short whatever it stands for (30 image URLs are under
 * 3 KB of JSON and about 48,000 tokens upstream), so a media type always takes the second pass.
 */
const SMALL_JSON = 16_384;
/** A part of a media type as JSON.stringify writes it (no spaces). */
const MEDIA_PART = /"type":"(?:image_url|input_image|file|input_file|image|document|input_audio)"/;

/** A binary document's estimate grows with its size (one token per 16 bytes, at least DOCUMENT_TOKENS): a 1 MB PDF reserves 65,536. */
const DOCUMENT_BYTES_PER_TOKEN = 16;

type Obj = Record<string, unknown>;

/** A data URL without its payload (`data:image/png;base64,`), and the payload's size in bytes; any other string unchanged. */
function bare(s: string): { text: string; bytes: number } {
  if (!s.startsWith('data:')) return { text: s, bytes: 0 };
  const comma = s.indexOf(',');
  return comma < 0 ? { text: s, bytes: 0 } : { text: s.slice(0, comma + 1), bytes: Math.floor(((s.length - comma - 1) * 3) / 4) };
}

const documentTokens = (bytes: number) => Math.max(DOCUMENT_TOKENS, Math.ceil(bytes / DOCUMENT_BYTES_PER_TOKEN));

/** What a media part stands for: its copy without the payload, its tokens, and what kind of estimate they are. */
interface Payload {
  part: Obj;
  tokens: number;
  /** a document by URL, whose size only the upstream sees */
  unsized?: true;
  /** an audio clip: its tokens are audio tokens (at the input rate by its duration) */
  audio?: true;
}

/**
 * A content part with only its media payload taken out (a data URL's base64, a base64 source's
 * `data`, an `input_audio` part's `data`; every other field, text included, stays to be counted), and
 * the tokens the payload stands for. Undefined for anything that is not a media part with a payload
 * or a URL (OpenAI, Anthropic and Responses part shapes).
 */
function withoutPayload(part: Obj, imageTokens = IMAGE_TOKENS): Payload | undefined {
  switch (part.type) {
    case 'image_url':
    case 'input_image': {
      const iu = part.image_url;
      if (typeof iu === 'string') return { part: withJsonKey(part, 'image_url', bare(iu).text), tokens: imageTokens };
      const url = (iu as Obj | undefined)?.url;
      return typeof url === 'string' ? { part: withJsonKey(part, 'image_url', withJsonKey(iu as Obj, 'url', bare(url).text)), tokens: imageTokens } : undefined;
    }
    case 'file':
    case 'input_file': {
      const holder = part.type === 'file' ? (part.file as Obj | undefined) : part;
      const data = holder?.file_data;
      if (typeof data !== 'string') return undefined;
      const b = bare(data);
      const inner = withJsonKey(holder!, 'file_data', b.text);
      const p: Payload = { part: part.type === 'file' ? withJsonKey(part, 'file', inner) : inner, tokens: documentTokens(b.bytes) };
      // file_data that is not a data URL is a URL the upstream fetches: its size is not known here
      if (!data.startsWith('data:')) p.unsized = true;
      return p;
    }
    case 'image':
    case 'document': {
      const source = part.source as Obj | undefined;
      if (source?.type === 'base64' && typeof source.data === 'string') {
        const bytes = Math.floor((source.data.length * 3) / 4);
        return { part: withJsonKey(part, 'source', withJsonKey(source, 'data', '')), tokens: part.type === 'image' ? imageTokens : documentTokens(bytes) };
      }
      if (source?.type === 'url') return part.type === 'image' ? { part, tokens: imageTokens } : { part, tokens: DOCUMENT_TOKENS, unsized: true };
      return undefined; // a text or content document is read as text
    }
    case 'input_audio': {
      // chat completions and Responses: `input_audio: { data, format }` (openai-node ChatCompletionContentPartInputAudio,
      // ResponseInputAudio); the Responses part's first shape had `data` and `format` on the part itself
      const inner = part.input_audio as Obj | undefined;
      const holder = inner && typeof inner === 'object' && typeof inner.data === 'string' ? inner : part;
      if (typeof holder.data !== 'string') return undefined;
      const tokens = inputAudioTokens(holder.data, holder.format);
      const emptied = withJsonKey(holder, 'data', '');
      return { part: holder === part ? emptied : withJsonKey(part, 'input_audio', emptied), tokens, audio: true };
    }
    default:
      return undefined;
  }
}

/**
 * The most tokens one image may bill on a model: its catalog `limits.image_tokens` (a positive
 * integer: gpt-4o-mini bills up to 48,169, Gemini tiles a large image past 1,600), else IMAGE_TOKENS,
 * which covers Anthropic's and OpenAI's tile-priced models (docs/catalog.md).
 */
export function imageTokensOf(model: { limits?: Record<string, unknown> | null }): number {
  const n = model.limits?.image_tokens;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : IMAGE_TOKENS;
}

/** The tokens one media part stands for (an image's fixed estimate, a document's by its size, an audio clip's by its duration); 0 for any other part or one without a payload or URL. */
export function mediaTokens(part: Obj): number {
  return withoutPayload(part)?.tokens ?? 0;
}

/** A request's JSON without its media payloads (jsonWithoutMedia). */
export interface WithoutMedia {
  json: string;
  /** the tokens the payloads stand for, audio tokens included */
  fixedTokens: number;
  /** documents by URL, whose size only the upstream sees (counted at DOCUMENT_TOKENS each) */
  unsized: number;
  /** of fixedTokens, the `input_audio` parts' audio tokens (by their duration) */
  audioTokens: number;
}

/**
 * The JSON of `value` (a request's messages, or any part of its body) with every image's, binary
 * document's and audio clip's payload left out, and the tokens they stand for: an image a fixed
 * `imageTokens` (the model's `limits.image_tokens`, imageTokensOf, else IMAGE_TOKENS), a document by
 * its size, an `input_audio` clip by its duration at OpenAI's input audio rate (audio-duration.ts).
 * Only payloads are left out, so a `type` a client adds to text cannot hide that text from the count.
 * Small JSON with no media part is returned as it is (one `JSON.stringify` and one scan), so the
 * common request pays nothing more.
 */
export function jsonWithoutMedia(value: unknown, imageTokens = IMAGE_TOKENS): WithoutMedia {
  const plain = JSON.stringify(value ?? '');
  if (plain.length < SMALL_JSON && !MEDIA_PART.test(plain)) return { json: plain, fixedTokens: 0, unsized: 0, audioTokens: 0 };
  let fixedTokens = 0;
  let unsized = 0;
  let audioTokens = 0;
  const json = JSON.stringify(value, (_key, v: unknown) => {
    // the replacer sees the copy it returns only through its fields, so nothing is counted twice
    if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Obj).type === 'string') {
      const m = withoutPayload(v as Obj, imageTokens);
      if (m) {
        fixedTokens += m.tokens;
        if (m.unsized) unsized++;
        if (m.audio) audioTokens += m.tokens;
        return m.part;
      }
    }
    return v;
  });
  return { json, fixedTokens, unsized, audioTokens };
}
