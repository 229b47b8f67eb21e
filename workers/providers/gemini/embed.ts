import { geminiApi } from './api';
import { postGemini } from './generate';
import type { EmbedOutcome, EmbedRequest } from '../openai/embed';
import { toBase64 } from '../../../shared/embeddings/encodings';
import type { UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';

/**
 * Embeddings through `batchEmbedContents`: one request per input, in input order, each naming the
 * model as the API requires; `dimensions` is `outputDimensionality`. The API reports no token
 * count, so the gateway's own count is billed (upstreamTokens 0).
 */
export async function embed(call: UpstreamCall, req: EmbedRequest, publicModel: string): Promise<EmbedOutcome> {
  const inputs = typeof req.input === 'string' ? [req.input] : req.input;
  const model = geminiApi.modelName(call.upstreamModel);
  const requests = inputs.map((text) => ({ model, content: { role: 'user', parts: [{ text }] }, ...(req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {}) }));
  const res = await postGemini({ ...call, callerKey: false }, 'batchEmbedContents', { requests });
  let json: { embeddings?: Array<{ values?: unknown }> };
  try {
    json = (await res.json()) as typeof json;
  } catch {
    throw errors.upstreamError('The upstream answered with a malformed body.');
  }
  if (!json || !Array.isArray(json.embeddings) || json.embeddings.length !== inputs.length) throw errors.upstreamError('The upstream answered with a malformed embeddings body.');
  const data = json.embeddings.map((e, index) => {
    const vec = e?.values;
    if (!Array.isArray(vec) || vec.length === 0 || !vec.every((x) => typeof x === 'number')) throw errors.upstreamError('The upstream answered with a malformed embedding.');
    return { object: 'embedding', index, embedding: req.encodingFormat === 'base64' ? toBase64(vec as number[]) : vec };
  });
  return { response: { object: 'list', data, model: publicModel }, upstreamTokens: 0 };
}
