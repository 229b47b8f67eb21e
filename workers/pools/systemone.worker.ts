import type { Worker } from 'bullmq';
import { createWorker } from '../../shared/queues/create-worker';
import { callDecisionDeployment } from './decision-call';
import { recordJobUsage } from '../../shared/metering/usage';
import { claimDelivery } from '../../shared/metering/usage-outbox';
import { settle, release } from '../../shared/billing/wallet';
import { parseDecisionAnswers, UnusableAnswer } from '../../shared/systemone/answers';
import { systemoneErrors } from '../../shared/systemone/errors';
import { config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { ApiError } from '../../shared/errors/ApiError';
import type { SystemoneJob, UpstreamTarget } from '../../shared/queues/payloads';
import type { DecisionResult } from '../../shared/systemone/types';
import type { WorkerRuntime } from '../runtime';
import type { CancelSignal } from '../../shared/cancel-source';
import type { JobContext } from '../../shared/queues/create-worker';
import type { RedisClient } from '../../shared/redis/connection';
import type { PoolState } from '../../shared/routing/pool-state';
import type { TokenUsage } from '../providers/types';
import { routeTask, type Routed, type RouterRefusals } from '../routing/route-request';
import { poolState } from '../routing/pool-state';
import { ROUTE_RESULT_KEY } from '../../shared/queues/route-meta';
import { detailTokens } from './detail-tokens';

/** Upstream and worker failures in the endpoint's codes. */
function decisionError(err: unknown, signal: CancelSignal): unknown {
  if (err instanceof UnusableAnswer) return systemoneErrors.backendError(`The decision backend answered unusably: ${err.message}.`);
  if (!(err instanceof ApiError)) return signal.aborted ? err : systemoneErrors.backendError('The decision backend call failed.');
  if (err.code.startsWith('systemone_')) return err;
  if (err.status === 429) return systemoneErrors.backendBusy(Number(err.headers['Retry-After'] ?? 1));
  if (err.code === 'deadline_exceeded') return systemoneErrors.deadline();
  return systemoneErrors.backendError(`The decision backend failed: ${err.message}`);
}

/**
 * The pool router's own answers in the endpoint's codes: every deployment cooling down, or at its
 * limits, is a busy backend to retry after a while (429 with Retry-After), as an upstream's 429 is.
 */
const REFUSALS: RouterRefusals = {
  cooling: (s) => systemoneErrors.backendBusy(s, 'Every deployment of this decision model is cooling down after failures; retry later.'),
  limited: (s) => systemoneErrors.backendBusy(s, 'Every deployment of this decision model is at its rate or concurrency limit; retry shortly.'),
};

/** One attempt's answer: the upstream's chat completion and its tokens. */
interface Answered {
  response: Record<string, unknown>;
  usage: TokenUsage;
}

/**
 * One upstream attempt on deployment `t` (decision-call.ts: its kind's adapter, its provider's
 * settings). Its answer is read after the attempt: an unusable answer is the model's, not a
 * deployment failure to cool down or retry.
 */
async function callDeployment(job: SystemoneJob, t: UpstreamTarget, signal: CancelSignal): Promise<Answered> {
  const outcome = await callDecisionDeployment(job, t, signal);
  return { response: outcome.response!, usage: outcome.usage };
}

/**
 * One decision request, served from its model's pool (workers/routing: balanced, cooled down, retried
 * on another deployment). On success the request is marked delivered (unless its pod gave up first:
 * then nothing is charged), the reservation is settled (input tokens only), then the usage event,
 * naming the deployment (and its request log row the upstream's cached and reasoning tokens, as a
 * chat job's), is added to the usage outbox (a plain XADD, awaited) before the result is published,
 * both idempotent by request id; on any failure the reservation is released. The route
 * rides on the result for the pod's headers only when the job carried one (an older pod sent none).
 */
export async function serveDecisionJob(redis: RedisClient, state: PoolState, d: SystemoneJob, ctx: JobContext): Promise<DecisionResult> {
  const releaseCredits = async () => {
    if (d.billing.mode === 'metered') await release(d.requestId).catch((e) => logger.error({ err: e }, 'reservation release failed'));
  };
  let result: DecisionResult;
  let routed: Routed<Answered>;
  try {
    routed = await routeTask(state, Object.assign({ operation: 'chat' }, d), ctx, (dep) => callDeployment(d, dep, ctx.signal), REFUSALS);
    const { response, usage } = routed.outcome;
    result = { answers: parseDecisionAnswers(d.plan, response), usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens } };
  } catch (err) {
    await releaseCredits();
    throw decisionError(err, ctx.signal);
  }
  // Charged only if it will be delivered: a pod that gave up first (deadline, client gone) gets
  // no answer, so the reservation is released and no usage recorded.
  if (!(await claimDelivery(redis, d.replyTo, d.requestId))) {
    await releaseCredits();
    throw new ApiError(499, 'client_closed_request', 'The request was given up before its answer.');
  }
  const charge = d.billing.mode === 'metered' ? Math.ceil(result.usage.input_tokens * d.billing.inputTokenMicros) : 0;
  let charged = 0;
  if (d.billing.mode === 'metered') {
    try {
      charged = (await settle(d.requestId, charge))?.settledMicros ?? 0;
    } catch (err) {
      logger.error({ err, requestId: d.requestId }, 'settling a decision reservation failed');
      await release(d.requestId).catch(() => undefined);
      throw systemoneErrors.billingUnavailable();
    }
  }
  // Awaited here, not handed to ctx.usage: the wallet charge above is already committed, and its
  // usage event (billed_micros) must not depend on the result publish that follows.
  await recordJobUsage(redis, d, 'decision', {
    inputTokens: result.usage.input_tokens,
    outputTokens: result.usage.output_tokens,
    units: { questions: d.plan.length, images: d.images, billed_micros: charged },
    deployment: routed.deployment,
    // the upstream's cached and reasoning tokens, for the request log row only (not billed apart)
    ...detailTokens(routed.outcome.response),
  }, routed.meta.attempts);
  return d.route ? Object.assign(result, { [ROUTE_RESULT_KEY]: routed.meta }) : result;
}

/** The systemone pool: decision jobs from the `systemone` queue (SYSTEMONE_CONCURRENCY per process), each served from its model's deployments (serveDecisionJob). */
export function startSystemoneWorkers(rt: WorkerRuntime): Worker[] {
  const state = poolState(rt);
  return [createWorker(rt, 'systemone', config().systemoneConcurrency, (job, ctx) => serveDecisionJob(rt.redis, state, job.data, ctx))];
}
