import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import type { CatalogModel } from '../../../shared/catalog/catalog';
import type { DecisionRequest, DecisionResult } from '../../../shared/systemone/types';
import { validate } from '../../validate';
import { systemoneSchema } from './schema';
import { checkImages } from './images';
import { decisionLimits, enforceLimits } from './limits';
import { runJob, ClientGone } from '../../dispatch/run-job';
import { targetOf } from '../../dispatch/target';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { buildDecisionPrompt, DEFAULT_IMAGE_TOKENS } from '../../../shared/systemone/prompt';
import { systemoneErrors } from '../../../shared/systemone/errors';
import { countTokens, TokenCountTimeout } from '../../../shared/tokenizer/pool';
import { reserve, release } from '../../../shared/billing/wallet';
import { laneLimit } from '../../../shared/lanes/policy';
import { ApiError } from '../../../shared/errors/ApiError';
import { errors } from '../../../shared/errors/codes';
import { config } from '../../../shared/config/env';
import { logger } from '../../../shared/logger';
import { checkModelAllowed } from '../../../shared/limits/controls';
import { limitsFor } from '../../dispatch/limits';
import { pricesOf } from '../../../shared/limits/usage-cost';
import { taskRoute, withRouteHeaders } from '../../dispatch/route';
import { DECISION_KINDS } from '../../../shared/catalog/decision-providers';
import { deliveryClaimed } from '../../../shared/metering/usage-outbox';

/** Tokens per chat message the upstream adds around each message (OpenAI's chat format). */
const MESSAGE_OVERHEAD_TOKENS = 3;

/** A decision-capable model by public id (routing-plan aliases first); no `-background` variants. */
async function resolveDecisionModel(ctx: AppContext, req: Request, requested: string): Promise<CatalogModel> {
  const aliased = req.auth?.modelMap[requested] ?? requested;
  let m: CatalogModel | undefined;
  try {
    m = await ctx.catalog.get(aliased);
  } catch (err) {
    logger.warn({ err }, 'catalog unavailable for a decision request');
    throw systemoneErrors.modelsUnavailable();
  }
  if (!m) throw errors.modelNotFound(requested);
  checkModelAllowed(req.auth?.controls, aliased, requested);
  if (!m.capabilities.decision) throw systemoneErrors.invalid(`The model '${requested}' is not a decision model; decision requests need a decision model id.`);
  if (!DECISION_KINDS.has(m.provider.kind)) throw systemoneErrors.invalid(`The model '${requested}' cannot serve decisions: its upstream does not support structured output.`);
  return m;
}

/** A decision's worst case on a key's budgets: its counted input and output budget at the model's list prices (the ledger's arithmetic). */
function decisionWorstCase(model: CatalogModel, inputTokens: number, maxOutputTokens: number): number {
  const p = pricesOf(model.prices);
  return inputTokens * (p.input_token ?? 0) + maxOutputTokens * (p.output_token ?? 0);
}

/** `to` with the headers `from` carried (a model pool's x-service-deployment and attempts). */
function keepingHeaders(to: ApiError, from: ApiError): ApiError {
  for (const [k, v] of Object.entries(from.headers)) to.headers[k] ??= v;
  return to;
}

/** Whether the worker claimed the answer of a request whose client left (Redis unreachable: no, the pod releases). */
function workerCharges(ctx: AppContext, requestId: string): Promise<boolean> {
  return deliveryClaimed(ctx.redis, ctx.replies.channelFor(requestId), requestId).catch(() => false);
}

/** Maps what can come back from the queue path to the endpoint's codes. */
function endpointError(err: unknown): unknown {
  if (err instanceof ClientGone) return err;
  if (!(err instanceof ApiError)) {
    logger.warn({ err }, 'decision job could not be queued');
    return systemoneErrors.queueUnavailable();
  }
  if (err.code === 'worker_lost') return keepingHeaders(systemoneErrors.backendError('The worker handling this request stopped before it answered.'), err);
  if (err.code === 'deadline_exceeded') return keepingHeaders(systemoneErrors.deadline(), err);
  return err;
}

/** `POST /v1/systemone`: validate, check limits, reserve credits (metered), run one queued upstream call. */
export function systemoneHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const started = (res.locals.startedAt as number | undefined) ?? Date.now();
    const auth = req.auth!;
    validate(systemoneSchema, req.body, 'systemone_invalid_request');
    // The body as parsed, not Joi's copy: nothing is converted, and a copy would drop an own
    // `__proto__` key (a caller-chosen question id that must be echoed verbatim).
    const body = req.body as DecisionRequest;
    const model = await resolveDecisionModel(ctx, req, body.model);
    const images = await checkImages(body);
    if (images > 0 && !model.capabilities.vision) {
      throw systemoneErrors.invalid(`The model '${body.model}' is text-only; image-bearing decision requests need a vision-capable decision model.`);
    }
    const limits = decisionLimits(model);
    const cfgLogprobs = model.config?.logprobs !== false;
    const built = buildDecisionPrompt(body, { logprobs: cfgLogprobs, maxOutputTokens: model.maxOutputTokens });
    const imageTokens = typeof model.config?.image_tokens === 'number' ? (model.config.image_tokens as number) : DEFAULT_IMAGE_TOKENS;
    const fixedTokens = 2 * MESSAGE_OVERHEAD_TOKENS + built.images * imageTokens;
    const inputTokens = await enforceLimits(
      limits,
      {
        questions: built.plan.length,
        stateBytes: built.stateBytes,
        requestBytes: Buffer.byteLength(JSON.stringify({ model: model.upstreamName, ...built.body })),
      },
      async (limit) => {
        const n = await countTokens(model.tokenizer, built.texts, Math.max(0, limit - fixedTokens)).catch((err) => {
          if (err instanceof TokenCountTimeout) throw systemoneErrors.invalid('The request is too large to count its input tokens in time.');
          throw err;
        });
        return n === false ? false : n + fixedTokens;
      },
    );

    const price = model.prices?.input_token;
    const metered = capabilityPolicy(auth.org, 'systemone') === 'metered'; // 'off' was refused by the router's policyGate
    if (metered && (typeof price !== 'number' || !Number.isFinite(price) || price < 0)) {
      logger.error({ model: model.publicId }, 'metered decision model without an input_token price');
      throw systemoneErrors.billingUnavailable();
    }
    if (metered) {
      try {
        await reserve(auth.orgId, req.id, inputTokens * price!);
      } catch (err) {
        if (err instanceof ApiError) throw err;
        logger.warn({ err }, 'wallet unavailable for a decision request');
        throw systemoneErrors.billingUnavailable();
      }
    }

    let result: DecisionResult;
    try {
      result = (await runJob(ctx, req, res, {
        queue: 'systemone',
        pool: 'systemone',
        lane: 'interactive',
        limit: laneLimit(auth.org, 'systemone', 'interactive'),
        overLimit: (s) => systemoneErrors.gateBusy(s),
        publicModel: body.model,
        timeoutMs: config().systemoneTimeoutMs,
        timeoutError: systemoneErrors.deadline,
        // the key's `rpm` (a decision counts as a request only for `rpm` and `tpm`, docs/keys.md) and its
        // budgets at the worst case the ledger can price it at: the counted input and the output budget
        // at the model's list prices (whatever the wallet charges), settled from its usage event
        reserve: limitsFor(ctx, req, model, async () => ({ input: 0, output: 0, fixedMicros: decisionWorstCase(model, inputTokens, Number(built.body.max_tokens ?? 0)) })),
        data: {
          target: targetOf(model),
          // the model's pool of deployments (api/dispatch/route.ts): balanced, retried and failed over by the
          // worker; its tokens (input and the output budget) count against a deployment's tpm
          route: taskRoute(model, 'decision'),
          estimatedTokens: inputTokens + Number(built.body.max_tokens ?? 0),
          body: built.body,
          plan: built.plan,
          images: built.images,
          billing: { mode: metered ? 'metered' : 'included', inputTokenMicros: metered ? price! : 0 },
        },
      }).then((r) => withRouteHeaders(res, r))) as DecisionResult;
    } catch (err) {
      // Nothing is charged for a request that did not answer; settling after this is a no-op. But a
      // client that left after the worker claimed the answer is the worker's to charge: a release
      // here could land before its settle and leave the answered work unbilled.
      if (metered && !(err instanceof ClientGone && (await workerCharges(ctx, req.id)))) {
        await release(req.id).catch((e) => logger.error({ err: e, requestId: req.id }, 'reservation release failed'));
      }
      throw endpointError(err);
    }
    res.json({ model: body.model, answers: result.answers, usage: result.usage, latency_ms: Date.now() - started });
  };
}
