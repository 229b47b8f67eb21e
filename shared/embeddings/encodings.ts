/**
 * The encodings of an embedding the APIs define over its float vector: OpenAI's `encoding_format:
 * base64` and Cohere's `embedding_types` (docs/embeddings.md). Cohere's `int8` and `uint8` are not
 * here: Cohere quantises them with ranges of its models' own, which no function of the vector gives,
 * so only a Cohere upstream answers them.
 */

/** Cohere's `EmbeddingType`s (the v2 embed document). */
export const EMBEDDING_TYPES = ['float', 'int8', 'uint8', 'binary', 'ubinary', 'base64'] as const;
export type EmbeddingType = (typeof EMBEDDING_TYPES)[number];

/** The types only a Cohere upstream computes (see above). */
export const UPSTREAM_ONLY_TYPES: readonly EmbeddingType[] = ['int8', 'uint8'];

/** The types computed from the floats (encodeAll), all but the upstream-only ones. */
export type ComputedType = Exclude<EmbeddingType, 'int8' | 'uint8'>;
export const isComputed = (t: EmbeddingType): t is ComputedType => !UPSTREAM_ONLY_TYPES.includes(t);

/** Little-endian float32 bytes, base64: OpenAI's `encoding_format: base64`, and Cohere's `base64` ("the float embedding bytes appended together"). */
export function toBase64(vec: number[]): string {
  const buf = Buffer.alloc(vec.length * 4);
  for (let i = 0; i < vec.length; i++) buf.writeFloatLE(vec[i], i * 4);
  return buf.toString('base64');
}

/**
 * Cohere's binary embeddings: one bit a dimension, 1 where the value is above 0, eight to a byte with
 * the first dimension in the highest bit (the last byte padded with 0 bits), so a vector of d
 * dimensions gives ceil(d / 8) values. `ubinary` the bytes as 0-255, `binary` the same minus 128
 * (-128 to 127), as Cohere and sentence-transformers' `quantize_embeddings` define them.
 */
export function packBits(vec: number[], signed: boolean): number[] {
  const out = new Array<number>(Math.ceil(vec.length / 8));
  for (let b = 0; b < out.length; b++) {
    let byte = 0;
    for (let k = 0; k < 8; k++) {
      const i = b * 8 + k;
      if (i < vec.length && vec[i] > 0) byte |= 0x80 >> k;
    }
    out[b] = signed ? byte - 128 : byte;
  }
  return out;
}

/** Type `t` of every vector, computed from the floats (not for the upstream-only types). */
export function encodeAll(t: ComputedType, floats: number[][]): unknown[] {
  if (t === 'float') return floats;
  if (t === 'base64') return floats.map(toBase64);
  return floats.map((v) => packBits(v, t === 'binary'));
}
