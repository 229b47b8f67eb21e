import type { JobEnvelope, PoolDeployment, PoolRouted, RouteStep, UpstreamTarget } from '../../shared/queues/payloads';
import type { Emit } from '../providers/types';
import { errors } from '../../shared/errors/codes';
import { config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { ROUTE_CHUNK_PREFIX, type RouteMeta } from '../../shared/queues/route-meta';
import type { PoolState } from '../../shared/routing/pool-state';
import { classify } from './failure';
import { sleep } from '../../shared/cancel-source';
import { NOOP, type SpanHandle } from '../../shared/tracing/trace';
import { attemptSpan, attemptServed } from './attempt-span';
import { deploymentAttempts, deploymentCooldownUntil, deploymentFailures, deploymentLatency, modelLabelsOf, requestAttempts, seriesOf } from './metrics';
import { merged } from '../../shared/merged';
import type { CancelSignal } from '../../shared/cancel-source';
import type { JobContext } from '../../shared/queues/create-worker';

/** What an attempt answers: at least the tokens it used (a deployment's tpm minute is corrected from them). */
export interface AttemptOutcome {
  usage: { inputTokens: number; outputTokens: number };
}

/** An attempt that uses no tokens a deployment's tpm minute counts (images, transcription and rerank are priced otherwise). */
export const NO_TOKENS = { inputTokens: 0, outputTokens: 0 };

/** One upstream attempt on a deployment of `step` (the model's own pool or a fallback's); `emit` streams to the client. */
export type AttemptCall<O extends AttemptOutcome> = (d: PoolDeployment, emit: Emit, step: RouteStep) => Promise<O>;

/** What routing reads of a job (chat, embeddings, rerank, images, transcription, decisions). */
export type RoutableJob = JobEnvelope & PoolRouted & { operation: string; target: UpstreamTarget };

export interface Routed<O extends AttemptOutcome> {
  outcome: O;
  meta: RouteMeta;
  /** The usage event's `deployment`: the name, prefixed with the model when a fallback served. */
  deployment: string;
  /** The model that served (the pool asked for, or a fallback, with its `priceDelta`). */
  step: RouteStep;
}

/**
 * The answers the router gives of its own when no deployment could be tried: every deployment cooling
 * down with no failure of the request's own to answer, or every one at its limits up to the deadline.
 * A task with an error family of its own (transcription, decisions) names them in it; chat, embeddings,
 * rerank and images answer the generic ones.
 */
export interface RouterRefusals {
  /** Every deployment cooling down (or being probed) for `retryAfter` seconds more. */
  cooling(retryAfter: number): Error;
  /** Every deployment at its rpm, tpm or concurrency limit until the request's deadline. */
  limited(retryAfter: number): Error;
}

const GENERIC_REFUSALS: RouterRefusals = {
  cooling: (s) => errors.upstreamUnavailable('Every deployment of this model is cooling down; retry later.', s),
  limited: (s) => errors.concurrencyLimit(s),
};

/** The pool of one a job without a route stands for (jobs enqueued before pools existed). */
function routeOf(job: RoutableJob): RouteStep[] {
  if (job.route?.length) return job.route;
  return [{ poolId: job.target.providerId, model: job.publicModel, fallback: false, deployments: [merged(job.target, { name: 'default', weight: 1, priority: 0, rpm: null, tpm: null, maxConcurrency: null })] }];
}

/**
 * Serves a job from its pool, then (chat) its fallbacks: each attempt takes a deployment in Redis
 * (healthy, under its limits, by weight and load), and a retryable failure before any byte reached
 * the client moves on to another deployment, or, in a pool of one, to the same one after a backoff,
 * within the attempt budget (POOL_MAX_ATTEMPTS) and the deadline. After the first streamed chunk
 * nothing is retried. The first chunk is preceded by the route metadata the pod turns into headers;
 * `onRoute` hears it at each attempt, so that a failure of any kind carries it (JobContext.route).
 */
export async function routeRequest<O extends AttemptOutcome>(
  state: PoolState,
  job: RoutableJob,
  signal: CancelSignal,
  emit: Emit,
  call: AttemptCall<O>,
  trace: SpanHandle = NOOP,
  onRoute: (m: RouteMeta) => void = () => undefined,
  refusals: RouterRefusals = GENERIC_REFUSALS,
): Promise<Routed<O>> {
  const cfg = config();
  const steps = routeOf(job);
  const estimatedTokens = job.estimatedTokens ?? 0;
  // A request stops this long before its deadline (POOL_DEADLINE_MARGIN_MS), so its answer reaches the pod in time.
  const stopAt = job.deadline - cfg.poolDeadlineMarginMs;
  let attempts = 0;
  let delivered = false;
  let last: unknown;
  /** Time spent waiting for a cooling pool, and the last cooldown seen (the 503's Retry-After). */
  let coolWaited = 0;
  let coolingMs = 0;
  // No pick and no fallback step starts once the deadline's margin is reached: the last failure is answered.
  const late = () => Date.now() >= stopAt;
  for (let s = 0; s < steps.length && attempts < cfg.poolMaxAttempts && !late(); s++) {
    const step = steps[s];
    const hasNext = s < steps.length - 1;
    let ownBackoff = 0;
    while (attempts < cfg.poolMaxAttempts && !late()) {
      if (signal.aborted) throw signal.reason;
      const pick = state.pickLocal(step, estimatedTokens) ?? (await state.pick(step, job.requestId, estimatedTokens, Math.random, attempts > 0));
      if (pick.kind === 'limited') {
        // Every deployment is at its limit: wait on the lane like any queued job while room can come
        // before the deadline (an attempt ending, or the minute turning for rpm/tpm), else the lane's
        // 429 at once, with the wait as Retry-After (it was held to the deadline, then refused).
        if (Date.now() + pick.waitMs >= stopAt) throw refusals.limited(Math.max(1, Math.ceil(pick.waitMs / 1000)));
        await sleep(pick.waitMs, signal);
        continue;
      }
      if (pick.kind === 'cooling') {
        // Every deployment is cooling (or being probed): the next fallback at once; else wait, as a pool
        // of one does, only while the waits add up to POOL_RETRY_WAIT_MAX_MS: a longer cooldown is
        // answered at once (the last failure, or the cooling refusal with Retry-After), not held silently.
        coolingMs = pick.waitMs;
        coolWaited += pick.waitMs;
        if (hasNext || coolWaited > cfg.poolRetryWaitMaxMs || Date.now() + pick.waitMs >= stopAt) break;
        await sleep(pick.waitMs, signal);
        continue;
      }
      const d = step.deployments[pick.index];
      // An attempt with the caller's own upstream key says nothing about the deployment under the
      // platform's credential: it neither cools it down nor clears its cooldown (one tenant's exhausted
      // key must not take a shared deployment away from every other org).
      const verdictOf = (v: 'up' | 'down' | 'none') => (d.sealedCallerKey ? 'none' : v);
      attempts++;
      const m: RouteMeta = { deployment: d.name, attempts, ...(step.fallback ? { fallbackModel: step.model } : {}) };
      onRoute(m);
      const attemptEmit: Emit = (chunk) => {
        if (!delivered) {
          delivered = true;
          emit(ROUTE_CHUNK_PREFIX + JSON.stringify(m));
          if (pick.probe && !d.sealedCallerKey) void state.markUp(pick.lease).catch(() => undefined);
        }
        emit(chunk);
      };
      const dep = seriesOf(step.model, d.name);
      const labels = dep.labels;
      const started = Date.now();
      const attempt = attemptSpan(trace, job, step, d, attempts);
      const release = state.hold(pick.lease);
      try {
        // The attempt's in-flight entry is renewed while it runs (a dead worker's lapses within a lease).
        const outcome = await call(d, attemptEmit, step).finally(release);
        attemptServed(attempt, outcome);
        deploymentAttempts.inc(dep.ok);
        deploymentLatency.observe(labels, (Date.now() - started) / 1000);
        if (!dep.cooldownClear) {
          deploymentCooldownUntil.set(labels, 0);
          dep.cooldownClear = true;
        }
        requestAttempts.observe(modelLabelsOf(job.publicModel), attempts);
        // Not awaited: the answer does not wait a round trip for it. On one Redis node the answer's
        // publish follows on the same connection, so the settle is applied first; on a cluster the
        // two may go to different nodes, and the settle can land a round trip after the answer.
        void state.settle(pick.lease, verdictOf('up'), undefined, outcome.usage.inputTokens + outcome.usage.outputTokens).catch((err) => logger.warn({ err }, 'pool settle failed'));
        return { outcome, meta: m, deployment: step.fallback ? `${step.model}/${d.name}` : d.name, step };
      } catch (err) {
        const f = classify(err, signal);
        attempt.fail(f.class);
        attempt.end();
        // an attempt that failed before its answer began used no tokens: its estimate leaves the deployment's tpm minute
        const settled = await state.settle(pick.lease, verdictOf(f.verdict), f.retryAfterMs, delivered ? undefined : 0).catch(() => undefined);
        if (!f.retryable || delivered) {
          deploymentAttempts.inc(merged(labels, { outcome: f.retryable ? 'failed' : 'rejected' }));
          if (f.retryable) deploymentFailures.inc(merged(labels, { class: f.class }));
          throw err;
        }
        deploymentAttempts.inc(merged(labels, { outcome: 'failed' }));
        deploymentFailures.inc(merged(labels, { class: f.class }));
        if (settled && settled.cooldownMs > 0) {
          deploymentCooldownUntil.set(labels, (Date.now() + settled.cooldownMs) / 1000);
          dep.cooldownClear = false;
        }
        logger.warn({ requestId: job.requestId, model: step.model, deployment: d.name, attempt: attempts, class: f.class, probe: pick.probe }, 'upstream attempt failed');
        last = err;
        if (step.deployments.length === 1) {
          if (hasNext) break;
          // A pool of one: the same deployment again after the upstream's Retry-After or a growing backoff.
          const wait = f.retryAfterMs ?? cfg.poolBackoffBaseMs * 2 ** ownBackoff++;
          if (wait > Math.min(cfg.poolBackoffMaxMs, cfg.poolRetryWaitMaxMs) || Date.now() + wait >= stopAt || attempts >= cfg.poolMaxAttempts) break;
          await sleep(wait, signal);
        }
      }
    }
  }
  if (attempts > 0) requestAttempts.observe(modelLabelsOf(job.publicModel), attempts);
  if (!last && late()) throw errors.deadline();
  throw last ?? refusals.cooling(Math.max(1, Math.ceil(coolingMs / 1000)));
}

/**
 * A job that streams nothing (embeddings, rerank, images, transcription, decisions) served from its
 * pool: routeRequest with the job's context, and the task's own refusals when it has an error family.
 */
export function routeTask<O extends AttemptOutcome>(state: PoolState, job: RoutableJob, ctx: JobContext, call: (d: PoolDeployment) => Promise<O>, refusals?: RouterRefusals): Promise<Routed<O>> {
  return routeRequest(state, job, ctx.signal, () => undefined, call, ctx.span, ctx.route, refusals);
}
