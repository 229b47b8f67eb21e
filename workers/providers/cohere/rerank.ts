import { cohereApi } from './api';
import { fetchUpstream } from '../http';
import type { UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';
import { tokenCount } from '../shape';

export interface RerankCall {
  query: string;
  documents: string[];
  topN?: number;
  returnDocuments: boolean;
}

export interface RerankOutcome {
  /** The Cohere v2 body without `id` (the edge sets the request id). */
  response: { results: Array<{ index: number; relevance_score: number; document?: { text: string } }>; meta: Record<string, unknown> };
  searchUnits: number;
}

/**
 * `POST {base}/v2/rerank`. The upstream scores; the gateway checks every index, sorts by score
 * (highest first, ties by index), applies `top_n`, and echoes document text when asked (Cohere v2
 * no longer does), asking the upstream for no more than the documents. Search units are the
 * upstream's `meta.billed_units.search_units` when it reports a count above 0, else `fallbackUnits`.
 */
export async function rerank(call: UpstreamCall, req: RerankCall, fallbackUnits: number): Promise<RerankOutcome> {
  const body: Record<string, unknown> = { model: call.upstreamModel, query: req.query, documents: req.documents };
  // a `top_n` past the document count means all of them (the gateway cuts the results itself): the
  // upstream is asked for at most that many, never for 1e+21 or 3000000000, which a strict server
  // (an integer field, int32) refuses or cannot parse
  if (req.topN !== undefined) body.top_n = Math.min(req.topN, req.documents.length);
  const res = await fetchUpstream(
    cohereApi.url(call.baseUrl, cohereApi.paths.rerank),
    { method: 'POST', headers: cohereApi.headers(call.apiKey), body: JSON.stringify(body) },
    { signal: call.signal, deadline: call.deadline, retries: call.retries },
  );
  let json: { results?: Array<{ index?: unknown; relevance_score?: unknown }>; meta?: { billed_units?: { search_units?: unknown } } };
  try {
    json = (await res.json()) as typeof json;
  } catch {
    throw errors.upstreamError('The upstream answered with a malformed body.');
  }
  if (!json || !Array.isArray(json.results)) throw errors.upstreamError('The upstream answered with a malformed rerank body.');
  const seen = new Set<number>();
  const results = json.results.map((r) => {
    const index = r?.index;
    const score = r?.relevance_score;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= req.documents.length || seen.has(index) || typeof score !== 'number' || !Number.isFinite(score)) {
      throw errors.upstreamError('The upstream answered with a malformed rerank result.');
    }
    seen.add(index);
    return { index, relevance_score: score, ...(req.returnDocuments ? { document: { text: req.documents[index] } } : {}) };
  });
  results.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  // a count (a safe integer, or one written as digits), above 0; else (1e300, 2^60, -3, 2.5) the
  // gateway's own: an absurd figure is never billed (cost_micros = units x price)
  const units = tokenCount(json.meta?.billed_units?.search_units);
  const searchUnits = units !== undefined && units > 0 ? units : fallbackUnits;
  return {
    response: {
      results: req.topN !== undefined ? results.slice(0, req.topN) : results,
      meta: { api_version: { version: '2' }, billed_units: { search_units: searchUnits } },
    },
    searchUnits,
  };
}
