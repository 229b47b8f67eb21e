import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import type { EmbedJob, JobEnvelope, RerankJob } from '../../shared/queues/payloads';
import type { CatalogModel } from '../../shared/catalog/catalog';
import { laneLimit } from '../../shared/lanes/policy';
import { errors } from '../../shared/errors/codes';
import { ApiError } from '../../shared/errors/ApiError';
import { runJob } from './run-job';
import { batchPricing } from './chat';
import { taskRoute, withRouteHeaders } from './route';
import { limitsFor } from './limits';
import { checkModelAllowed } from '../../shared/limits/controls';
import { isComputed } from '../../shared/embeddings/encodings';

const COHERE_KIND: ReadonlySet<string> = new Set(['cohere']);

/** Whether one of the model's deployments is served by Cohere (which alone computes its `int8`/`uint8` embeddings). */
export const hasCohereDeployment = (model: CatalogModel): boolean => model.deployments.some((d) => d.provider.kind === 'cohere');

/** Embeddings and rerank share one pool with one lane per org (never a chat lane). */
export const EMBEDDINGS_POOL = 'embeddings';
export const EMBEDDINGS_LANE = 'default';
/** The org's concurrent embeddings + rerank requests when neither plan nor org sets `embeddings:default`. */
export const EMBEDDINGS_LANE_DEFAULT = 16;

export function embeddingsLaneLimit(req: Request): number {
  return laneLimit(req.auth!.org, EMBEDDINGS_POOL, EMBEDDINGS_LANE, EMBEDDINGS_LANE_DEFAULT);
}

type Task = 'embeddings' | 'rerank';

/**
 * The model for a task route: routing-plan aliases first, then the exact catalog id (no
 * `-background` variant on these routes), then the capability (decision and chat ids are refused).
 */
export async function resolveTaskModel(ctx: AppContext, req: Request, requested: string, task: Task): Promise<CatalogModel> {
  const id = req.auth?.modelMap[requested] ?? requested;
  const model = await ctx.catalog.get(id);
  if (!model) throw errors.modelNotFound(requested);
  checkModelAllowed(req.auth?.controls, id, requested);
  if (!model.capabilities[task]) {
    const code = task === 'embeddings' ? 'model_not_embedding_capable' : 'model_not_rerank_capable';
    throw new ApiError(400, code, `The model '${requested}' does not serve ${task}.`, { param: 'model' });
  }
  return model;
}

/** Runs one embeddings or rerank job on the embeddings pool, under the org's embeddings lane lease, served from the model's deployments. */
export function dispatchEmbeddings(
  ctx: AppContext,
  req: Request,
  res: Response,
  publicModel: string,
  model: CatalogModel,
  data: Omit<EmbedJob, keyof JobEnvelope> | Omit<RerankJob, keyof JobEnvelope>,
): Promise<unknown> {
  // the model's pool of deployments (route.ts): balanced, retried and failed over by the worker, as chat is
  // Cohere's int8/uint8 embeddings only a Cohere deployment gives: a pool that mixes kinds serves such a request from its Cohere deployments only
  // (another kind would answer floats alone, and the request would fail after its usage was written)
  const cohereOnly = data.operation === 'embed' && !!data.embeddingTypes?.some((t) => !isComputed(t));
  const route = cohereOnly ? taskRoute(model, 'embeddings', COHERE_KIND) : taskRoute(model, data.operation === 'embed' ? 'embeddings' : 'rerank');
  const answer = runJob(ctx, req, res, {
    queue: 'embeddings',
    pool: EMBEDDINGS_POOL,
    lane: req.batchLine ? 'background' : EMBEDDINGS_LANE,
    limit: req.batchLine?.laneLimit ?? embeddingsLaneLimit(req),
    batch: batchPricing(req, model),
    overLimit: (s) =>
      new ApiError(429, 'embeddings_lanes_exhausted', 'Too many concurrent embeddings and rerank requests for this organization; retry shortly.', { retryAfter: s }),
    publicModel,
    // embeddings: the counted input at its price; rerank: its search units at theirs
    reserve: limitsFor(ctx, req, model, async () =>
      data.operation === 'embed' ? { input: data.countedTokens ?? 0, output: 0 } : { input: 0, output: 0, fixedMicros: data.searchUnits * data.unitPrice }),
    data: Object.assign({ route }, data) as never,
  });
  return answer.then((result) => withRouteHeaders(res, result));
}
