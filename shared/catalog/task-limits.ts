import type { CatalogModel } from './catalog';

/** The embeddings and rerank request body cap (spec: 2 MiB), enforced while the body is read. */
export const EMBEDDINGS_BODY_BYTES = 2 * 1024 * 1024;

export interface EmbeddingLimits {
  max_batch_size: number;
  max_input_tokens: number;
  /**
   * The tokens of all of a request's inputs together: declared, else OpenAI's 300,000 ("all embedding
   * models enforce a maximum of 300,000 tokens summed across all inputs") where a deployment speaks
   * OpenAI's API (kind openai or azure), else none (Cohere and Gemini publish no such bound).
   */
  max_tokens_per_request: number | null;
  /** The model's native vector length, when declared. */
  dimensions: number | null;
  /** Whether `dimensions` (a shorter vector) may be requested. */
  supports_dimensions: boolean;
}

export interface RerankLimits {
  /** Bounds each query + document pair (there is no separate query limit). */
  max_input_tokens: number;
  max_documents: number;
}

/** Provider kinds that speak OpenAI's embeddings API, and so its per-request token bound. */
const OPENAI_KINDS = new Set<string>(['openai', 'azure']);

const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

/** A catalog entry's declared embeddings limits; undeclared ones get OpenAI's published defaults. */
export function embeddingLimits(m: CatalogModel): EmbeddingLimits {
  const l = m.limits ?? {};
  return {
    max_batch_size: int(l.max_batch_size) ?? 2048,
    max_input_tokens: int(l.max_input_tokens) ?? m.contextWindow ?? 8192,
    max_tokens_per_request: int(l.max_tokens_per_request) ?? (m.deployments.some((d) => OPENAI_KINDS.has(d.provider.kind)) ? 300_000 : null),
    dimensions: int(l.dimensions) ?? null,
    supports_dimensions: l.supports_dimensions === true,
  };
}

/** A catalog entry's declared rerank limits; undeclared ones get Cohere's published defaults. */
export function rerankLimits(m: CatalogModel): RerankLimits {
  const l = m.limits ?? {};
  return {
    max_input_tokens: int(l.max_input_tokens) ?? m.contextWindow ?? 4096,
    // Cohere's published maximum ("Number of Documents: 1 to 10,000"; 1,000 is its advice for speed, not a limit)
    max_documents: int(l.max_documents) ?? 10_000,
  };
}
