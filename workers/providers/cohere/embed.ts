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

/** Cohere's embed takes at most 96 texts a call (its document: "Maximum number of texts per call is 96"). */
export const COHERE_EMBED_BATCH = 96;

type CohereEmbedRequest = EmbedRequest & { inputType?: CohereInputType; embeddingTypes?: EmbeddingType[] };

/**
 * `POST {base}/v2/embed` on a Cohere upstream (Cohere's v2 embed document): the texts, the input
 * type, float embeddings (the gateway encodes base64 itself) and, for a `/v2/embed` request that
 * asks for more (`embeddingTypes`), every type it asks for, which Cohere computes itself and the
 * answer carries as sent (`by_type`, checked: one per text, in its type's range); `output_dimension` for `dimensions`,
 * and `truncate: NONE` (the gateway never truncates; it has checked each text against the model's
 * limit). The answer must carry one float vector per text, in order; it becomes OpenAI's embeddings
 * body, which both edges answer from (`/v1/embeddings` as it is, `/v2/embed` in Cohere's shape).
 * More texts than one call takes (OpenAI's API takes 2048) go as consecutive calls of 96, joined in
 * order, their billed tokens added up (the gateway's own count when a call reports none).
 */
export async function embed(call: UpstreamCall, req: CohereEmbedRequest, publicModel: string): Promise<EmbedOutcome> {
  const texts = typeof req.input === 'string' ? [req.input] : req.input;
  const others = (req.embeddingTypes ?? []).filter((t) => t !== 'float');
  const data: Array<Record<string, unknown>> = [];
  const byType: Record<string, unknown[]> = {};
  for (const t of others) byType[t] = [];
  let upstreamTokens = 0;
  let counted = true;
  for (let start = 0; start < texts.length; start += COHERE_EMBED_BATCH) {
    const part = await embedCall(call, req, texts.slice(start, start + COHERE_EMBED_BATCH), others);
    for (const vec of part.float) data.push({ object: 'embedding', index: data.length, embedding: req.encodingFormat === 'base64' ? toBase64(vec) : vec });
    for (const t of others) byType[t].push(...part.byType[t]);
    if (part.tokens === undefined) counted = false;
    else upstreamTokens += part.tokens;
  }
  const response: Record<string, unknown> = { object: 'list', data, model: publicModel };
  if (others.length) response.by_type = byType;
  return { response, upstreamTokens: counted ? upstreamTokens : 0 };
}

/** One call of at most 96 texts: its float vectors, the other types asked, its billed tokens; else `upstream_error`. */
async function embedCall(call: UpstreamCall, req: CohereEmbedRequest, texts: string[], others: EmbeddingType[]): Promise<{ float: number[][]; byType: Record<string, unknown[]>; tokens?: number }> {
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
  for (const vec of float) {
    if (!Array.isArray(vec) || vec.length === 0 || !vec.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw errors.upstreamError('The upstream answered with a malformed embedding.');
    }
  }
  const byType: Record<string, unknown[]> = {};
  for (const t of others) {
    const got = json.embeddings?.[t];
    if (!Array.isArray(got) || got.length !== texts.length || !got.every((v) => wellFormed(t, v))) {
      throw errors.upstreamError(`The upstream answered with malformed '${t}' embeddings.`);
    }
    byType[t] = got;
  }
  return { float: float as number[][], byType, tokens: tokenCount(json.meta?.billed_units?.input_tokens) };
}
