import { openaiApi, openaiEndpoint, type OpenAiEndpoint } from './api';
import { fetchUpstream } from '../http';
import type { UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';
import { tokenCount } from '../shape';
import { toBase64 } from '../../../shared/embeddings/encodings';

export interface EmbedRequest {
  input: string | string[];
  encodingFormat: 'float' | 'base64';
  dimensions?: number;
}

export interface EmbedOutcome {
  /** OpenAI's embeddings body, `model` set to the public id, vectors in the caller's format. */
  response: Record<string, unknown>;
  /** Input tokens the upstream reported (0 when it reported none). */
  upstreamTokens: number;
}


function fromBase64(s: string): number[] {
  const buf = Buffer.from(s, 'base64');
  return Array.from({ length: Math.floor(buf.length / 4) }, (_, i) => buf.readFloatLE(i * 4));
}

function vectorOf(v: unknown): number[] | undefined {
  if (typeof v === 'string') return fromBase64(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'number')) return v as number[];
  return undefined;
}

/**
 * `POST {base}/embeddings` on an OpenAI-compatible upstream (OpenAI, vLLM, TEI's OpenAI route,
 * Ollama). The upstream is always asked for floats, which every such server supports; the gateway
 * encodes base64 itself. The answer must carry one vector per input, in input order.
 */
export async function embed(call: UpstreamCall, req: EmbedRequest, publicModel: string, endpoint: OpenAiEndpoint = openaiEndpoint): Promise<EmbedOutcome> {
  const body: Record<string, unknown> = { model: call.upstreamModel, input: req.input, encoding_format: 'float' };
  if (req.dimensions !== undefined) body.dimensions = req.dimensions;
  const res = await fetchUpstream(
    endpoint.url(call, openaiApi.paths.embeddings),
    { method: 'POST', headers: endpoint.headers(call), body: JSON.stringify(body) },
    { signal: call.signal, deadline: call.deadline, retries: call.retries, errorHints: endpoint.errorHints },
  );
  let json: { data?: Array<{ index?: number; embedding?: unknown }>; usage?: { prompt_tokens?: number } };
  try {
    json = (await res.json()) as typeof json;
  } catch {
    throw errors.upstreamError('The upstream answered with a malformed body.');
  }
  const expected = typeof req.input === 'string' ? 1 : req.input.length;
  if (!json || !Array.isArray(json.data) || json.data.length !== expected) {
    throw errors.upstreamError('The upstream answered with a malformed embeddings body.');
  }
  const ordered = [...json.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const data = ordered.map((d, i) => {
    const vec = vectorOf(d.embedding);
    if (!vec || vec.length === 0) throw errors.upstreamError('The upstream answered with a malformed embedding.');
    // a server that ignores `dimensions` (the catalog says the model takes it) would hand the caller vectors of another length
    if (req.dimensions !== undefined && vec.length !== req.dimensions) {
      throw errors.upstreamError(`The upstream answered vectors of ${vec.length} dimensions where ${req.dimensions} were asked; it does not honour 'dimensions'.`);
    }
    return { object: 'embedding', index: i, embedding: req.encodingFormat === 'base64' ? toBase64(vec) : vec };
  });
  // not a count (1e300, negative, a fraction): the gateway's own count is billed (embeddings.worker.ts)
  const upstreamTokens = tokenCount(json.usage?.prompt_tokens) ?? 0;
  return { response: { object: 'list', data, model: publicModel }, upstreamTokens };
}
