import { encode } from 'gpt-tokenizer';
import { fnv1a } from '../../shared/fnv1a';

const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Tokens as the simulated upstream reports them (special-token text counts as text). */
export function simTokens(text: string): number {
  return text ? encode(text, AS_TEXT).length : 0;
}

/** Lower-cased words (letters and digits of any script). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}


/**
 * A deterministic embedding of `text` with `native` dimensions: hashed word and character-trigram
 * features, each spread over every dimension with pseudo-random signs seeded by its hash (a random
 * sign projection, which keeps texts that share words and spellings close), L2-normalised. Every
 * dimension carries signal, so asking for fewer `dimensions` (the first ones, re-normalised, as
 * OpenAI's shortened text-embedding-3 vectors) never gives an all-zero vector.
 */
export function embedText(text: string, native: number, dimensions = native): number[] {
  const v = new Float64Array(native);
  const add = (feature: string, weight: number) => {
    let x = fnv1a(feature) | 0 || 1;
    for (let i = 0; i < native; i++) {
      if (i % 32 === 0) {
        x ^= x << 13; // xorshift32: 32 signs per step
        x ^= x >>> 17;
        x ^= x << 5;
      }
      v[i] += (x >>> i % 32) & 1 ? weight : -weight;
    }
  };
  for (const w of words(text)) {
    add(`w:${w}`, 1);
    const padded = ` ${w} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(`c:${padded.slice(i, i + 3)}`, 0.5);
  }
  if (words(text).length === 0) add(`raw:${text}`, 1); // punctuation-only text still gets a vector
  const out = Array.from(v.subarray(0, dimensions));
  if (!out.some((x) => x !== 0)) out[0] = 1; // features that cancel exactly still give a unit vector
  const norm = Math.sqrt(out.reduce((s, x) => s + x * x, 0));
  return out.map((x) => Math.fround(x / norm));
}

/**
 * Lexical relevance (BM25 over the request's documents), mapped to [0, 1) by s / (s + 1): a document
 * sharing no word with the query scores 0; more, rarer shared words score higher.
 */
export function lexicalScores(query: string, documents: string[]): number[] {
  const k1 = 1.2;
  const b = 0.75;
  const docs = documents.map(words);
  const avg = docs.reduce((s, d) => s + d.length, 0) / Math.max(1, docs.length) || 1;
  const terms = [...new Set(words(query))];
  const df = new Map(terms.map((t) => [t, docs.filter((d) => d.includes(t)).length]));
  return docs.map((d) => {
    let s = 0;
    for (const t of terms) {
      const tf = d.filter((w) => w === t).length;
      if (!tf) continue;
      const n = df.get(t)!;
      const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
      s += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.length) / avg));
    }
    return s / (s + 1);
  });
}
