import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import type { ChatJob } from '../../shared/queues/payloads';
import { chatQueue } from '../../shared/queues/names';
import { laneFor, laneLimit } from '../../shared/lanes/policy';
import { errors } from '../../shared/errors/codes';
import { ApiError } from '../../shared/errors/ApiError';
import { encrypt } from '../../shared/crypto';
import { checkModelAllowed } from '../../shared/limits/controls';
import { runJob } from './run-job';
import { chatLimits } from './limits';
import { targetOf } from './target';
import type { ResolvedModel } from '../../shared/catalog/catalog';

/** Resolves the model the caller named (routing-plan aliases first; `-background` variants too), or 404. */
export async function resolveRequestedModel(ctx: AppContext, req: Request, requested: string): Promise<ResolvedModel> {
  const aliased = req.auth?.modelMap[requested] ?? requested;
  const resolved = await ctx.catalog.resolve(aliased);
  if (!resolved) throw errors.modelNotFound(requested);
  checkModelAllowed(req.auth?.controls, aliased, requested);
  return { ...resolved, requestedId: requested };
}

/** Resolves a chat-capable model for the caller (routing-plan aliases first), or throws. */
export async function resolveChatModel(ctx: AppContext, req: Request, requested: string): Promise<ResolvedModel> {
  const resolved = await resolveRequestedModel(ctx, req, requested);
  if (!resolved.model.capabilities.chat) {
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
  /** Forward the caller's own upstream key (chat-completions dialect only). */
  passthrough: boolean;
  onChunk?: (data: string) => void;
  /** See RunJobOptions.jobId. */
  jobId?: string;
  /** See ChatJob.anthropicBeta. */
  anthropicBeta?: string;
}

/** Runs one chat-style request through lanes and the chat queue; used by every dialect. */
export function dispatchChat(ctx: AppContext, req: Request, res: Response, d: ChatDispatch): Promise<unknown> {
  const auth = req.auth!;
  const lane = laneFor(auth.org, d.resolved.background);
  const target = targetOf(d.resolved.model);
  if (d.passthrough && auth.callerUpstreamKey) target.sealedCallerKey = encrypt(auth.callerUpstreamKey);
  return runJob(ctx, req, res, {
    queue: chatQueue(lane),
    pool: 'chat',
    lane,
    limit: laneLimit(auth.org, 'chat', lane),
    overLimit: (s) => errors.concurrencyLimit(s),
    publicModel: d.resolved.requestedId,
    stream: d.stream,
    onChunk: d.onChunk,
    jobId: d.jobId,
    reserve: chatLimits(ctx, req, d.resolved.model, d.body),
    data: { operation: d.operation, target, body: d.body, includeUsage: d.includeUsage, ...(d.anthropicBeta ? { anthropicBeta: d.anthropicBeta } : {}) },
  });
}
