import { invalid, isInt, kindOf, rejectUnknownFields, requireModel } from './errors';
import type { RerankLimits } from '../../../shared/catalog/task-limits';
import { countEach, TokenCountTimeout } from '../../../shared/tokenizer/pool';

/** Cohere's v2 fields; the last four are accepted and ignored (nothing is truncated or chunked). */
export const RERANK_FIELDS = ['model', 'query', 'documents', 'top_n', 'return_documents', 'max_tokens_per_doc', 'rank_fields', 'max_chunks_per_doc', 'priority'] as const;

/** Cohere bills one search unit per query with up to 100 documents. */
export const DOCUMENTS_PER_SEARCH_UNIT = 100;

export interface RerankRequest {
  model: string;
  query: string;
  documents: string[];
  topN?: number;
  returnDocuments: boolean;
}

/** The checks that need no model. `null` on an optional field means "not given". */
export function parseRerank(body: Record<string, unknown>): RerankRequest {
  rejectUnknownFields(body, RERANK_FIELDS);
  const model = requireModel(body);
  const q = body.query;
  if (typeof q !== 'string') throw invalid('invalid_query', `'query' is required and must be a string${q === undefined ? '' : `, not ${kindOf(q)}`}.`);
  if (q.trim().length === 0) throw invalid('invalid_query', "'query' must not be empty.");
  const docs = body.documents;
  if (!Array.isArray(docs)) throw invalid('invalid_documents', `'documents' is required and must be an array of strings${docs === undefined ? '' : `, not ${kindOf(docs)}`}.`);
  if (docs.length === 0) throw invalid('invalid_documents', "'documents' must not be empty.");
  for (let i = 0; i < docs.length; i++) {
    if (typeof docs[i] !== 'string') throw invalid('invalid_documents', `'documents[${i}]' must be a string, not ${kindOf(docs[i])}.`);
    if ((docs[i] as string).length === 0) throw invalid('invalid_documents', `'documents[${i}]' must not be an empty string.`);
  }
  const topN = body.top_n ?? undefined;
  if (topN !== undefined && (typeof topN !== 'number' || !Number.isInteger(topN) || topN < 1)) {
    throw invalid('invalid_top_n', "'top_n' must be a positive integer.");
  }
  const rd = body.return_documents ?? false;
  if (typeof rd !== 'boolean') throw invalid('invalid_input', "'return_documents' must be a boolean.");
  checkIgnoredFields(body);
  return { model, query: q, documents: docs as string[], topN: topN as number | undefined, returnDocuments: rd };
}

const what = (v: unknown) => (typeof v === 'number' ? String(v) : kindOf(v));

/**
 * The accepted-and-ignored fields still have Cohere's types (v2: `max_tokens_per_doc` an integer,
 * `priority` an integer 0 to 999; v1: `max_chunks_per_doc` an integer, `rank_fields` strings):
 * a wrong one is refused (400 `invalid_input` naming it) rather than silently ignored.
 */
function checkIgnoredFields(body: Record<string, unknown>): void {
  const { max_tokens_per_doc: mt, max_chunks_per_doc: mc, priority: pr, rank_fields: rf } = body;
  if (mt != null && !isInt(mt, 1)) throw invalid('invalid_input', `'max_tokens_per_doc' must be a positive integer, not ${what(mt)}.`);
  if (mc != null && !isInt(mc, 1)) throw invalid('invalid_input', `'max_chunks_per_doc' must be a positive integer, not ${what(mc)}.`);
  if (pr != null && !isInt(pr, 0, 999)) throw invalid('invalid_input', `'priority' must be an integer from 0 to 999, not ${what(pr)}.`);
  if (rf != null && !(Array.isArray(rf) && rf.every((f) => typeof f === 'string'))) throw invalid('invalid_input', `'rank_fields' must be an array of strings, not ${kindOf(rf)}.`);
}

/**
 * The model's limits: the document count, and each query + document pair within the model's input
 * tokens (a long query leaves less room for every document), counted off the event loop when large
 * and within the token-count time budget. Returns the search units to bill.
 */
export async function checkRerankLimits(req: RerankRequest, model: string, tokenizer: string, limits: RerankLimits): Promise<number> {
  if (req.documents.length > limits.max_documents) {
    throw invalid('batch_too_large', `'documents' has ${req.documents.length} items; the model '${model}' takes at most ${limits.max_documents} per request.`);
  }
  const max = limits.max_input_tokens;
  const [q] = await counted(countEach(tokenizer, [req.query], max));
  if (q === false || q >= max) {
    throw invalid('input_too_long', `'query' alone fills the model's limit of ${max} tokens per query + document pair; nothing is truncated.`);
  }
  const docs = await counted(countEach(tokenizer, req.documents, max - q));
  for (let i = 0; i < docs.length; i++) {
    if (docs[i] === false) {
      throw invalid('input_too_long', `'query' + 'documents[${i}]' is longer than the model's limit of ${max} tokens per pair (the query takes ${q}); nothing is truncated.`);
    }
  }
  return Math.ceil(req.documents.length / DOCUMENTS_PER_SEARCH_UNIT);
}

/** A count past the time budget is an input too large, like any other. */
function counted<T>(p: Promise<T>): Promise<T> {
  return p.catch((err: unknown) => {
    if (err instanceof TokenCountTimeout) throw invalid('input_too_long', 'The query and documents are too large to count their tokens in time; send fewer or shorter documents.');
    throw err;
  });
}
