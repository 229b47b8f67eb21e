import type { Worker } from 'bullmq';
import { createShardWorkers } from '../../shared/queues/create-worker';
import { embed } from '../providers/openai/embed';
import { embed as azureEmbed } from '../providers/azure/embed';
import { rerank } from '../providers/cohere/rerank';
import { embed as cohereEmbed } from '../providers/cohere/embed';
import { embed as geminiEmbed } from '../providers/gemini/embed';
import { platformCredential } from '../credentials';
import { config } from '../../shared/config/env';
import { ApiError } from '../../shared/errors/ApiError';
import type { WorkerRuntime } from '../runtime';
import type { JobContext } from '../../shared/queues/create-worker';
import type { EmbeddingsJob } from '../../shared/queues/payloads';

function unsupported(op: string, kind: string): ApiError {
  return new ApiError(502, 'upstream_unsupported', `No ${op} adapter for upstream kind '${kind}'.`);
}

/** Calls the upstream and states the one usage event of the request; returns the body to answer. */
async function run(d: EmbeddingsJob, { signal, usage }: JobContext): Promise<Record<string, unknown>> {
  const t = d.target;
  const call = { baseUrl: t.baseUrl, settings: t.settings, apiKey: await platformCredential(t.providerId), upstreamModel: t.upstreamModel, signal, deadline: d.deadline };
  if (d.operation === 'embed') {
    const adapter = t.kind === 'openai' ? embed : t.kind === 'azure' ? azureEmbed : t.kind === 'gemini' ? geminiEmbed : t.kind === 'cohere' ? cohereEmbed : undefined;
    if (!adapter) throw unsupported('embeddings', t.kind);
    const out = await adapter(call, { input: d.input, encodingFormat: d.encodingFormat, dimensions: d.dimensions, inputType: d.inputType, embeddingTypes: d.embeddingTypes }, d.publicModel);
    const tokens = out.upstreamTokens > 0 ? out.upstreamTokens : d.countedTokens;
    usage('embeddings', { inputTokens: tokens });
    // set on the answer itself (this job's own), not a spread's copy (shared/merged.ts)
    out.response.usage = { prompt_tokens: tokens, total_tokens: tokens };
    return out.response;
  }
  if (t.kind !== 'cohere') throw unsupported('rerank', t.kind);
  const out = await rerank(call, { query: d.query, documents: d.documents, topN: d.topN, returnDocuments: d.returnDocuments }, d.searchUnits);
  // priced on the event (as images are): every cost reader adds `cost_micros`
  usage('rerank', { units: { search_units: out.searchUnits, cost_micros: out.searchUnits * d.unitPrice } });
  return out.response;
}

/**
 * The embeddings pool: embeddings and rerank jobs from the `embeddings` queue, with a concurrency of
 * its own, so they never hold a chat slot. The usage event goes into the usage outbox with the
 * result publish; a failed upstream call writes none.
 */
export function startEmbeddingsWorkers(rt: WorkerRuntime): Worker[] {
  // one worker per shard of the queue (QUEUE_SHARDS_EMBEDDINGS), the concurrency split over them
  return createShardWorkers(rt, 'embeddings', config().embeddingsConcurrency, (job, ctx) => run(job.data, ctx));
}
