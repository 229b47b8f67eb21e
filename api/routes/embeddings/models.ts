import type { CatalogModel } from '../../../shared/catalog/catalog';
import { EMBEDDINGS_BODY_BYTES, embeddingLimits, rerankLimits } from '../../../shared/catalog/task-limits';
import { DOCUMENTS_PER_SEARCH_UNIT } from './rerank.schema';
import { openAiModelHeader } from '../models/present';

/** What the org may do on these routes: its lane count and how it is billed. */
export interface TaskPolicy {
  enabled: boolean;
  max_concurrent_requests: number;
  billing: 'metered';
}

/** A `GET /v1/embeddings/models` entry: declared limits and the org's effective policy. */
export function embeddingModel(m: CatalogModel, policy: TaskPolicy) {
  return {
    ...openAiModelHeader(m),
    limits: { ...embeddingLimits(m), encoding_formats: ['float', 'base64'], max_request_bytes: EMBEDDINGS_BODY_BYTES },
    tokenizer: m.tokenizer,
    policy: { ...policy, billed_unit: 'input_token', prices: { input_token: m.prices.input_token ?? 0 } },
  };
}

/** A `GET /v1/rerank/models` entry: declared limits and the org's effective policy. */
export function rerankModel(m: CatalogModel, policy: TaskPolicy) {
  return {
    ...openAiModelHeader(m),
    limits: { ...rerankLimits(m), max_request_bytes: EMBEDDINGS_BODY_BYTES },
    tokenizer: m.tokenizer,
    policy: { ...policy, billed_unit: 'search_unit', documents_per_search_unit: DOCUMENTS_PER_SEARCH_UNIT, prices: { search_unit: m.prices.search_unit ?? 0 } },
  };
}
