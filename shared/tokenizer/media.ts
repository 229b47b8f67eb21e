/**
 * Images and binary documents in a request's messages: a text tokenizer cannot read them, and their
 * base64 payload is no measure of what an upstream bills (a 300 KB image is about 270,000 tokens of
 * base64 text, while OpenAI bills at most about 1,100 tokens for it and Anthropic about 1,600), so
 * every count of a request's input takes them out and adds a fixed estimate each (docs/keys.md).
 */
export const IMAGE_TOKENS = 1600;
export const DOCUMENT_TOKENS = 1600;

/** Below this many characters of JSON a request's media cannot distort a count much: no second pass. */
const SMALL_JSON = 16_384;

type Obj = Record<string, unknown>;

/** Fixed tokens a content part stands for when it is media (OpenAI, Anthropic and Responses part shapes); 0 otherwise. */
function mediaTokens(part: Obj): number {
  switch (part.type) {
    case 'image_url':
    case 'image':
    case 'input_image':
      return IMAGE_TOKENS;
    case 'file':
    case 'input_file':
      return DOCUMENT_TOKENS;
    case 'document': {
      const kind = (part.source as Obj | undefined)?.type;
      return kind === 'text' || kind === 'content' ? 0 : DOCUMENT_TOKENS; // a text document is read as text
    }
    default:
      return 0;
  }
}

/**
 * The JSON of `value` (a request's messages, or any part of its body) with every image and binary
 * document replaced by an empty string, and the fixed tokens they stand for. Small JSON is returned
 * as it is (one `JSON.stringify`, as before), so the common request pays nothing more.
 */
export function jsonWithoutMedia(value: unknown): { json: string; fixedTokens: number } {
  const plain = JSON.stringify(value ?? '');
  if (plain.length < SMALL_JSON) return { json: plain, fixedTokens: 0 };
  let fixedTokens = 0;
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Obj).type === 'string') {
      const t = mediaTokens(v as Obj);
      if (t) {
        fixedTokens += t;
        return '';
      }
    }
    return v;
  });
  return { json, fixedTokens };
}
