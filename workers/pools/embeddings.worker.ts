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
import type { EmbeddingsJob, UpstreamTarget } from '../../shared/queues/payloads';
import { NO_TOKENS, routeTask } from '../routing/route-request';
import type { PoolState } from '../../shared/routing/pool-state';
import { ROUTE_RESULT_KEY } from '../../shared/queues/route-meta';
import { poolState } from '../routing/pool-state';
import type { CancelSignal } from '../../shared/cancel-source';

function unsupported(op: string, kind: string): ApiError {
  return new ApiError(502, 'upstream_unsupported', `No ${op} adapter for upstream kind '${kind}'.`);
}

/** One attempt's answer: the body, and what its usage event states. */
interface Answered {
  response: Record<string, unknown>;
  usage: { inputTokens: number; outputTokens: number };
  searchUnits?: number;
}

/** One upstream attempt of the job on deployment `t`. */
async function attempt(d: EmbeddingsJob, t: UpstreamTarget, signal: CancelSignal): Promise<Answered> {
  // the pool's router retries (workers/routing): a failure is seen, counted and cooled down there
  const call = { baseUrl: t.baseUrl, settings: t.settings, apiKey: await platformCredential(t.providerId), upstreamModel: t.upstreamModel, signal, deadline: d.deadline, retries: 0 };
  if (d.operation === 'embed') {
    const adapter = t.kind === 'openai' ? embed : t.kind === 'azure' ? azureEmbed : t.kind === 'gemini' ? geminiEmbed : t.kind === 'cohere' ? cohereEmbed : undefined;
    if (!adapter) throw unsupported('embeddings', t.kind);
    const out = await adapter(call, { input: d.input, encodingFormat: d.encodingFormat, dimensions: d.dimensions, inputType: d.inputType, embeddingTypes: d.embeddingTypes }, d.publicModel);
    const tokens = out.upstreamTokens > 0 ? out.upstreamTokens : d.countedTokens;
    // set on the answer itself (this job's own), not a spread's copy (shared/merged.ts)
    out.response.usage = { prompt_tokens: tokens, total_tokens: tokens };
    return { response: out.response, usage: { inputTokens: tokens, outputTokens: 0 } };
  }
  if (t.kind !== 'cohere') throw unsupported('rerank', t.kind);
  const out = await rerank(call, { query: d.query, documents: d.documents, topN: d.topN, returnDocuments: d.returnDocuments }, d.searchUnits);
  return { response: out.response, usage: NO_TOKENS, searchUnits: out.searchUnits };
}

/**
 * Serves the job from its model's pool (workers/routing: balanced, cooled down, retried on another
 * deployment before any answer), states the one usage event of the request naming the deployment that
 * served, and returns the body to answer with its route metadata (the pod's `x-service-deployment`).
 */
export async function serveEmbeddingsJob(state: PoolState, d: EmbeddingsJob, ctx: JobContext): Promise<Record<string, unknown>> {
  const routed = await routeTask(state, d, ctx, (dep) => attempt(d, dep, ctx.signal));
  const { response, usage, searchUnits } = routed.outcome;
  if (d.operation === 'embed') ctx.usage('embeddings', { inputTokens: usage.inputTokens, deployment: routed.deployment });
  // priced on the event (as images are): every cost reader adds `cost_micros`
  else ctx.usage('rerank', { units: { search_units: searchUnits!, cost_micros: searchUnits! * d.unitPrice }, deployment: routed.deployment });
  // the route for the pod's headers, only to a pod that sent one (an older pod would pass the key on in the body)
  if (d.route) response[ROUTE_RESULT_KEY] = routed.meta;
  return response;
}

/**
 * The embeddings pool: embeddings and rerank jobs from the `embeddings` queue, with a concurrency of
 * its own, so they never hold a chat slot; each served from its model's deployments. The usage event goes into the usage outbox with the
 * result publish; a failed upstream call writes none.
 */
export function startEmbeddingsWorkers(rt: WorkerRuntime): Worker[] {
  // one worker per shard of the queue (QUEUE_SHARDS_EMBEDDINGS), the concurrency split over them
  const state = poolState(rt);
  return createShardWorkers(rt, 'embeddings', config().embeddingsConcurrency, (job, ctx) => serveEmbeddingsJob(state, job.data, ctx));
}
