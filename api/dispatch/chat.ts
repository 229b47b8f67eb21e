import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import type { ChatJob } from '../../shared/queues/payloads';
import { chatQueue } from '../../shared/queues/names';
import { laneFor, laneLimit } from '../../shared/lanes/policy';
import { errors } from '../../shared/errors/codes';
import { ApiError } from '../../shared/errors/ApiError';
import { encrypt } from '../../shared/crypto';
import { checkModelAllowed } from '../../shared/limits/controls';
import { runJob, type RunJobOptions } from './run-job';
import type { QueueName } from '../../shared/queues/names';
import type { CatalogModel } from '../../shared/catalog/catalog';
import { pricesOf } from '../../shared/limits/usage-cost';
import { chatLimits } from './limits';
import { targetOf } from './target';
import { applyRoute, routeFor, withRouteHeaders } from './route';
import type { WorkspacePin } from './workspace-pin';
import type { AudioAsked } from '../../shared/catalog/audio-prices';
import { ROUTE_CHUNK_PREFIX, type RouteMeta } from '../../shared/queues/route-meta';
import type { ResolvedModel } from '../../shared/catalog/catalog';
import { merged } from '../../shared/merged';

/** Resolves the model the caller named (routing-plan aliases first; `-background` variants too), or `notFound` (404 by default). */
export async function resolveRequestedModel(ctx: AppContext, req: Request, requested: string, notFound: (model: string) => ApiError = errors.modelNotFound): Promise<ResolvedModel> {
  const aliased = req.auth?.modelMap[requested] ?? requested;
  const resolved = await ctx.catalog.resolve(aliased);
  if (!resolved) throw notFound(requested);
  checkModelAllowed(req.auth?.controls, aliased, requested, resolved.background);
  return merged(resolved, { requestedId: requested });
}

/**
 * OpenAI's refusal of a model that is not a chat model on `/v1/chat/completions`: 404, `param`
 * `model`, in its words (its body as quoted in egoist/chatwise-releases issue 1256, 2026-02; its
 * `code` is null, the gateway's `model_not_chat_capable`). The other routes keep their 400.
 */
const NOT_A_CHAT_MODEL = 'This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use v1/completions?';

/**
 * Resolves a chat-capable model for the caller (routing-plan aliases first), or throws; `route`:
 * `chat`, OpenAI's 404 for a model that is not a chat model on `/v1/chat/completions`; `responses`,
 * the Responses API's 400 for an unknown model (errors.responsesModelNotFound).
 */
export async function resolveChatModel(ctx: AppContext, req: Request, requested: string, route?: 'chat' | 'responses'): Promise<ResolvedModel> {
  const resolved = await resolveRequestedModel(ctx, req, requested, route === 'responses' ? errors.responsesModelNotFound : undefined);
  if (!resolved.model.capabilities.chat) {
    if (route === 'chat') throw new ApiError(404, 'model_not_chat_capable', NOT_A_CHAT_MODEL, { param: 'model' });
    throw new ApiError(400, 'model_not_chat_capable', `The model '${requested}' does not serve chat.`);
  }
  return resolved;
}

export interface ChatDispatch {
  resolved: ResolvedModel;
  operation: ChatJob['operation'];
  /** Canonical request body (OpenAI chat-completions or completions shape). */
  body: Record<string, unknown>;
  stream: boolean;
  includeUsage: boolean;
  /** Forward the caller's own upstream key (chat-completions dialect only, its provider allowing: api/dispatch/passthrough.ts). */
  passthrough: boolean;
  /** Audio the request asks on the platform's credential, the model pricing it (api/routes/chat/router.ts; shared/catalog/audio-prices.ts). */
  audio?: AudioAsked;
  onChunk?: (data: string) => void;
  /** See RunJobOptions.jobId. */
  jobId?: string;
  /** See ChatJob.anthropicBeta. */
  anthropicBeta?: string;
  /** The workspace the request's handed-out ids were made in: only its deployments are routed to (workspace-pin.ts). */
  pin?: WorkspacePin;
  /**
   * A later model turn of one client request (native search): its tokens and cost are reserved, but
   * it is not another request for the key's `rpm` (the first turn counted the request).
   */
  laterTurn?: boolean;
  /** See RunJobOptions.partOfRequest. */
  partOfRequest?: boolean;
  /** See RunJobOptions.signal (a background response's cancel). */
  signal?: AbortSignal;
  /** See RunJobOptions.detached (a background response's stream). */
  detached?: boolean;
}

/** A batch line's pricing: the model's prices and the plan's multiplier (docs/batches.md). */
export function batchPricing(req: Request, model: CatalogModel): RunJobOptions<QueueName>['batch'] {
  return req.batchLine ? { multiplier: req.batchLine.priceMultiplier, prices: pricesOf(model.prices) } : undefined;
}

/** Runs one chat-style request through lanes and the chat queue; used by every dialect. */
export async function dispatchChat(ctx: AppContext, req: Request, res: Response, d: ChatDispatch): Promise<unknown> {
  const auth = req.auth!;
  const lane = req.batchLine ? 'background' : laneFor(auth.org, d.resolved.background);
  const target = targetOf(d.resolved.model);
  const sealed = d.passthrough && auth.callerUpstreamKey ? encrypt(auth.callerUpstreamKey) : undefined;
  if (sealed) target.sealedCallerKey = sealed;
  const { route, estimatedTokens, heldPrices, heldCallMicros } = await routeFor(ctx, d.resolved.model, d.body, d.operation, !!sealed, auth.controls, d.audio, d.pin);
  if (sealed) for (const step of route) for (const dep of step.deployments) dep.sealedCallerKey = sealed;
  // The pool's route metadata becomes headers: ahead of the first chunk, in a JSON result, or on an error.
  const onChunk = (c: string) => {
    if (c.startsWith(ROUTE_CHUNK_PREFIX)) return applyRoute(res, JSON.parse(c.slice(ROUTE_CHUNK_PREFIX.length)) as RouteMeta);
    d.onChunk?.(c);
  };
  const result = await runJob(ctx, req, res, {
    queue: chatQueue(lane),
    pool: 'chat',
    lane,
    limit: req.batchLine?.laneLimit ?? laneLimit(auth.org, 'chat', lane),
    overLimit: (s) => errors.concurrencyLimit(s),
    publicModel: d.resolved.requestedId,
    stream: d.stream,
    onChunk,
    jobId: d.jobId,
    partOfRequest: d.partOfRequest,
    signal: d.signal,
    detached: d.detached,
    batch: batchPricing(req, d.resolved.model),
    reserve: chatLimits(ctx, req, d.resolved.model, d.body, d.operation, { countsAsRequest: !d.laterTurn, priced: !sealed, heldPrices, heldCallMicros }),
    data: { operation: d.operation, target, body: d.body, includeUsage: d.includeUsage, route, estimatedTokens, ...(d.anthropicBeta ? { anthropicBeta: d.anthropicBeta } : {}) },
  });
  return withRouteHeaders(res, result);
}
