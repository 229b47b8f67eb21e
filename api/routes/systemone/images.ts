import FileType from 'file-type';
import { systemoneErrors } from '../../../shared/systemone/errors';
import type { DecisionRequest } from '../../../shared/systemone/types';
import { isRecord } from '../../../shared/is-record';

export const MAX_IMAGES = 6;
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Nesting deeper than this in the state, instructions or criteria is refused (it also bounds recursion). */
export const MAX_DEPTH = 64;

/** Accepted data URL prefixes and the media type their bytes must really be. */
const PREFIXES: Record<string, string> = {
  'data:image/jpeg;base64,': 'image/jpeg',
  'data:image/png;base64,': 'image/png',
  'data:image/webp;base64,': 'image/webp',
};

const invalid = systemoneErrors.invalid;

/** Where a value sits: image options allowed, score criteria (never), or anywhere else (never). */
type Place = 'allowed' | 'score' | 'elsewhere';

interface Found {
  path: string;
  url: string;
}

const looksLikeImageDataUrl = (s: string) => /^\s*data:image\//i.test(s);

/**
 * Walks a value to any depth. In allowed places an object with an `image` key must be an image
 * option (`{image, text?}`); in score criteria any object with `image` is refused; anywhere, a
 * string that is an image data URL outside an image option is refused.
 */
function walk(v: unknown, place: Place, path: string, found: Found[], depth = 0): void {
  if (typeof v === 'string') {
    if (looksLikeImageDataUrl(v)) {
      throw invalid(
        place === 'allowed'
          ? `${path}: an image must be given as an image option {"image": <data URL>, "text"?: <string>}.`
          : `${path}: image data URLs are not accepted here; images belong in instructions, choice criteria or noul true/false values, or the top-level images array.`,
      );
    }
    return;
  }
  const container = Array.isArray(v) || isRecord(v);
  if (container && depth >= MAX_DEPTH) throw invalid(`${path.slice(0, 200)}: nested deeper than ${MAX_DEPTH} levels.`);
  if (Array.isArray(v)) {
    v.forEach((x, i) => walk(x, place, `${path}[${i}]`, found, depth + 1));
    return;
  }
  if (!isRecord(v)) return;
  if (Object.prototype.hasOwnProperty.call(v, 'image')) {
    if (place === 'score') throw invalid(`${path}: score criteria do not accept image options.`);
    if (place === 'allowed') {
      const extra = Object.keys(v).filter((k) => k !== 'image' && k !== 'text');
      if (typeof v.image !== 'string' || extra.length || (v.text !== undefined && typeof v.text !== 'string')) {
        throw invalid(`${path}: an image option is {"image": <data URL string>, "text"?: <string>} and nothing else.`);
      }
      found.push({ path: `${path}.image`, url: v.image });
      return;
    }
  }
  for (const [k, x] of Object.entries(v)) walk(x, place, `${path}.${k}`, found, depth + 1);
}

/**
 * Base64 alphabet with up to two `=` at the end. Not `/^[A-Za-z0-9+/]+={0,2}$/`: on a multi-megabyte
 * string V8's regexp backtracking overflowed the stack now and then ("Maximum call stack size
 * exceeded", a 500 where a 400 was due); a search for one character outside the alphabet cannot.
 */
function isBase64(b64: string): boolean {
  const body = b64.endsWith('==') ? b64.slice(0, -2) : b64.endsWith('=') ? b64.slice(0, -1) : b64;
  return body.length > 0 && !/[^A-Za-z0-9+/]/.test(body);
}

/** Checks one data URL: an accepted prefix, clean base64, at most 5 MiB decoded, and bytes of that type. */
async function checkDataUrl(f: Found): Promise<void> {
  if (/^\s*https?:/i.test(f.url)) throw invalid(`${f.path}: remote image URLs are not accepted; send a base64 data URL.`);
  const prefix = Object.keys(PREFIXES).find((p) => f.url.startsWith(p));
  if (!prefix) throw invalid(`${f.path}: images must be data URLs starting with data:image/jpeg;base64, data:image/png;base64, or data:image/webp;base64,.`);
  const b64 = f.url.slice(prefix.length);
  if (b64.length === 0 || b64.length % 4 !== 0 || !isBase64(b64)) throw invalid(`${f.path}: the image is not valid base64.`);
  const bytes = (b64.length / 4) * 3 - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);
  if (bytes > MAX_IMAGE_BYTES) throw invalid(`${f.path}: the image is ${bytes} bytes decoded; at most ${MAX_IMAGE_BYTES} are accepted.`);
  const head = Buffer.from(b64.slice(0, 8192), 'base64');
  // file-type throws (EndOfStreamError) on a known signature cut short: not the declared type either
  const sniffed = await FileType.fromBuffer(head).catch(() => undefined);
  if (sniffed?.mime !== PREFIXES[prefix]) throw invalid(`${f.path}: the image bytes are not ${PREFIXES[prefix]}.`);
}

/**
 * Applies every image rule of a decision request and returns how many images it carries (the
 * state image and each image option).
 */
export async function checkImages(req: DecisionRequest): Promise<number> {
  const found: Found[] = [];
  walk(req.state, 'elsewhere', 'state', found);
  for (const [id, q] of Object.entries(req.questions)) {
    const base = `questions.${id}`;
    walk(q.instructions, 'allowed', `${base}.instructions`, found);
    if (q.criteria !== undefined) walk(q.criteria, q.type === 'score' ? 'score' : 'allowed', `${base}.criteria`, found);
  }
  (req.images ?? []).forEach((url, i) => found.push({ path: `images[${i}]`, url }));
  if (found.length > MAX_IMAGES) throw invalid(`The request carries ${found.length} images; at most ${MAX_IMAGES} are accepted (the state image and every image option).`);
  for (const f of found) await checkDataUrl(f);
  return found.length;
}
