import { cohereApi } from './api';
import { tokenCount } from '../shape';
import { fetchUpstream } from '../http';
import type { UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';
import type { EmbedOutcome, EmbedRequest } from '../openai/embed';
import { toBase64, type EmbeddingType } from '../../../shared/embeddings/encodings';

/** Cohere's input types for text (`EmbedInputType`, `image` aside). */
export type CohereInputType = 'search_document' | 'search_query' | 'classification' | 'clustering';

/**
 * What a request that names no input type sends (an OpenAI-shaped `/v1/embeddings` request has no
 * such field, and Cohere's v3 and later models require one): texts embedded to be searched, Cohere's
 * and most clients' common case.
 */
export const DEFAULT_INPUT_TYPE: CohereInputType = 'search_document';

/** The integer range of each of Cohere's integer embedding types. */
const INTEGER_RANGE: Partial<Record<EmbeddingType, [number, number]>> = { int8: [-128, 127], uint8: [0, 255], binary: [-128, 127], ubinary: [0, 255] };

/** One typed embedding as Cohere sends it: a base64 string, or a non-empty array of integers in its type's range. */
function wellFormed(t: EmbeddingType, v: unknown): boolean {
  if (t === 'base64') return typeof v === 'string' && v.length > 0;
  const [lo, hi] = INTEGER_RANGE[t]!;
  return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= lo && x <= hi);
}

/**
 * `POST {base}/v2/embed` on a Cohere upstream (Cohere's v2 embed document): the texts, the input
 * type, float embeddings (the gateway encodes base64 itself) and, for a `/v2/embed` request that
 * asks for more (`embeddingTypes`), every type it asks for, which Cohere computes itself and the
 * answer carries as sent (`by_type`, checked: one per text, in its type's range); `output_dimension` for `dimensions`,
 * and `truncate: NONE` (the gateway never truncates; it has checked each text against the model's
 * limit). The answer must carry one float vector per text, in order; it becomes OpenAI's embeddings
 * body, which both edges answer from (`/v1/embeddings` as it is, `/v2/embed` in Cohere's shape).
 */
export async function embed(call: UpstreamCall, req: EmbedRequest & { inputType?: CohereInputType; embeddingTypes?: EmbeddingType[] }, publicModel: string): Promise<EmbedOutcome> {
  const texts = typeof req.input === 'string' ? [req.input] : req.input;
  const others = (req.embeddingTypes ?? []).filter((t) => t !== 'float');
  const body: Record<string, unknown> = { model: call.upstreamModel, texts, input_type: req.inputType ?? DEFAULT_INPUT_TYPE, embedding_types: ['float', ...others], truncate: 'NONE' };
  if (req.dimensions !== undefined) body.output_dimension = req.dimensions;
  const res = await fetchUpstream(
    cohereApi.url(call.baseUrl, cohereApi.paths.embed),
    { method: 'POST', headers: cohereApi.headers(call.apiKey), body: JSON.stringify(body) },
    { signal: call.signal, deadline: call.deadline, retries: call.retries },
  );
  let json: { embeddings?: Record<string, unknown>; meta?: { billed_units?: { input_tokens?: unknown } } };
  try {
    json = (await res.json()) as typeof json;
  } catch {
    throw errors.upstreamError('The upstream answered with a malformed body.');
  }
  const float = json?.embeddings?.float;
  if (!Array.isArray(float) || float.length !== texts.length) throw errors.upstreamError('The upstream answered with a malformed embeddings body.');
  const data = float.map((vec: unknown, index) => {
    if (!Array.isArray(vec) || vec.length === 0 || !vec.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw errors.upstreamError('The upstream answered with a malformed embedding.');
    }
    return { object: 'embedding', index, embedding: req.encodingFormat === 'base64' ? toBase64(vec as number[]) : (vec as number[]) };
  });
  const response: Record<string, unknown> = { object: 'list', data, model: publicModel };
  if (others.length) {
    const byType: Record<string, unknown[]> = {};
    for (const t of others) {
      const got = json.embeddings?.[t];
      if (!Array.isArray(got) || got.length !== texts.length || !got.every((v) => wellFormed(t, v))) {
        throw errors.upstreamError(`The upstream answered with malformed '${t}' embeddings.`);
      }
      byType[t] = got;
    }
    response.by_type = byType;
  }
  const billed = json.meta?.billed_units?.input_tokens;
  const upstreamTokens = tokenCount(billed) ?? 0;
  return { response, upstreamTokens };
}
