import { cohereApi } from './api';
import { fetchUpstream } from '../http';
import type { UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';
import { toBase64, type EmbedOutcome, type EmbedRequest } from '../openai/embed';

/** Cohere's input types for text (`EmbedInputType`, `image` aside). */
export type CohereInputType = 'search_document' | 'search_query' | 'classification' | 'clustering';

/**
 * What a request that names no input type sends (an OpenAI-shaped `/v1/embeddings` request has no
 * such field, and Cohere's v3 and later models require one): texts embedded to be searched, Cohere's
 * and most clients' common case.
 */
export const DEFAULT_INPUT_TYPE: CohereInputType = 'search_document';

/**
 * `POST {base}/v2/embed` on a Cohere upstream (Cohere's v2 embed document): the texts, the input
 * type, float embeddings (the gateway encodes base64 itself), `output_dimension` for `dimensions`,
 * and `truncate: NONE` (the gateway never truncates; it has checked each text against the model's
 * limit). The answer must carry one float vector per text, in order; it becomes OpenAI's embeddings
 * body, which both edges answer from (`/v1/embeddings` as it is, `/v2/embed` in Cohere's shape).
 */
export async function embed(call: UpstreamCall, req: EmbedRequest & { inputType?: CohereInputType }, publicModel: string): Promise<EmbedOutcome> {
  const texts = typeof req.input === 'string' ? [req.input] : req.input;
  const body: Record<string, unknown> = { model: call.upstreamModel, texts, input_type: req.inputType ?? DEFAULT_INPUT_TYPE, embedding_types: ['float'], truncate: 'NONE' };
  if (req.dimensions !== undefined) body.output_dimension = req.dimensions;
  const res = await fetchUpstream(
    cohereApi.url(call.baseUrl, cohereApi.paths.embed),
    { method: 'POST', headers: cohereApi.headers(call.apiKey), body: JSON.stringify(body) },
    { signal: call.signal, deadline: call.deadline },
  );
  let json: { embeddings?: { float?: unknown }; meta?: { billed_units?: { input_tokens?: unknown } } };
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
  const billed = json.meta?.billed_units?.input_tokens;
  const upstreamTokens = typeof billed === 'number' && Number.isInteger(billed) && billed > 0 ? billed : 0;
  return { response: { object: 'list', data, model: publicModel }, upstreamTokens };
}
