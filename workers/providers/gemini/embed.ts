import { geminiApi } from './api';
import { postGemini } from './generate';
import type { EmbedOutcome, EmbedRequest } from '../openai/embed';
import { toBase64 } from '../../../shared/embeddings/encodings';
import type { UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';

/** Gemini refuses a bigger batch: "BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch". */
export const GEMINI_EMBED_BATCH = 100;

/**
 * Embeddings through `batchEmbedContents`: one request per input, in input order, each naming the
 * model as the API requires; `dimensions` is `outputDimensionality`. More inputs than one batch takes
 * (OpenAI's API takes 2048) go as consecutive batches of 100, their embeddings joined in order. The
 * API reports no token count, so the gateway's own count is billed (upstreamTokens 0).
 */
export async function embed(call: UpstreamCall, req: EmbedRequest, publicModel: string): Promise<EmbedOutcome> {
  const inputs = typeof req.input === 'string' ? [req.input] : req.input;
  const model = geminiApi.modelName(call.upstreamModel);
  const data: Array<Record<string, unknown>> = [];
  for (let start = 0; start < inputs.length; start += GEMINI_EMBED_BATCH) {
    const batch = inputs.slice(start, start + GEMINI_EMBED_BATCH);
    const requests = batch.map((text) => ({ model, content: { role: 'user', parts: [{ text }] }, ...(req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {}) }));
    for (const vec of await embedBatch(call, requests)) {
      data.push({ object: 'embedding', index: data.length, embedding: req.encodingFormat === 'base64' ? toBase64(vec) : vec });
    }
  }
  return { response: { object: 'list', data, model: publicModel }, upstreamTokens: 0 };
}

/** One `batchEmbedContents` call: one vector per request, or `upstream_error`. */
async function embedBatch(call: UpstreamCall, requests: unknown[]): Promise<number[][]> {
  const res = await postGemini({ ...call, callerKey: false }, 'batchEmbedContents', { requests });
  let json: { embeddings?: Array<{ values?: unknown }> };
  try {
    json = (await res.json()) as typeof json;
  } catch {
    throw errors.upstreamError('The upstream answered with a malformed body.');
  }
  if (!json || !Array.isArray(json.embeddings) || json.embeddings.length !== requests.length) throw errors.upstreamError('The upstream answered with a malformed embeddings body.');
  return json.embeddings.map((e) => {
    const vec = e?.values;
    if (!Array.isArray(vec) || vec.length === 0 || !vec.every((x) => typeof x === 'number')) throw errors.upstreamError('The upstream answered with a malformed embedding.');
    return vec as number[];
  });
}
