import type { Worker } from 'bullmq';
import { createWorker } from '../../shared/queues/create-worker';
import { chatComplete } from '../providers/openai/chatComplete';
import { platformCredential } from '../credentials';
import { recordJobUsage } from '../../shared/metering/usage';
import { claimDelivery } from '../../shared/metering/usage-outbox';
import { settle, release } from '../../shared/billing/wallet';
import { parseDecisionAnswers, UnusableAnswer } from '../../shared/systemone/answers';
import { systemoneErrors } from '../../shared/systemone/errors';
import { config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { ApiError } from '../../shared/errors/ApiError';
import type { SystemoneJob } from '../../shared/queues/payloads';
import type { DecisionResult } from '../../shared/systemone/types';
import type { WorkerRuntime } from '../runtime';
import type { CancelSignal } from '../../shared/cancel-source';

/** Upstream and worker failures in the endpoint's codes. */
function decisionError(err: unknown, signal: CancelSignal): unknown {
  if (err instanceof UnusableAnswer) return systemoneErrors.backendError(`The decision backend answered unusably: ${err.message}.`);
  if (!(err instanceof ApiError)) return signal.aborted ? err : systemoneErrors.backendError('The decision backend call failed.');
  if (err.code.startsWith('systemone_')) return err;
  if (err.status === 429) return systemoneErrors.backendBusy(Number(err.headers['Retry-After'] ?? 1));
  if (err.code === 'deadline_exceeded') return systemoneErrors.deadline();
  return systemoneErrors.backendError(`The decision backend failed: ${err.message}`);
}

async function decide(job: SystemoneJob, signal: CancelSignal): Promise<DecisionResult> {
  const t = job.target;
  const apiKey = await platformCredential(t.providerId);
  const call = { baseUrl: t.baseUrl, apiKey, upstreamModel: t.upstreamModel, tokenizer: t.tokenizer, signal, deadline: job.deadline };
  const outcome = await chatComplete(call, 'chat', job.body, job.publicModel, undefined);
  const answers = parseDecisionAnswers(job.plan, outcome.response!);
  return { answers, usage: { input_tokens: outcome.usage.inputTokens, output_tokens: outcome.usage.outputTokens } };
}

/**
 * The systemone pool: one upstream chat call per decision request. On success the request is
 * marked delivered (unless its pod gave up first: then nothing is charged), the reservation is
 * settled (input tokens only), then the usage event is added to the usage outbox (a plain XADD,
 * awaited) before the result is published, both idempotent by request id; on any failure the
 * reservation is released.
 */
export function startSystemoneWorkers(rt: WorkerRuntime): Worker[] {
  return [
    createWorker(rt, 'systemone', config().systemoneConcurrency, async (job, ctx) => {
      const d = job.data;
      const releaseCredits = async () => {
        if (d.billing.mode === 'metered') await release(d.requestId).catch((e) => logger.error({ err: e }, 'reservation release failed'));
      };
      let result: DecisionResult;
      try {
        result = await decide(d, ctx.signal);
      } catch (err) {
        await releaseCredits();
        throw decisionError(err, ctx.signal);
      }
      // Charged only if it will be delivered: a pod that gave up first (deadline, client gone) gets
      // no answer, so the reservation is released and no usage recorded.
      if (!(await claimDelivery(rt.redis, d.replyTo, d.requestId))) {
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
      await recordJobUsage(rt.redis, d, 'decision', {
        inputTokens: result.usage.input_tokens,
        outputTokens: result.usage.output_tokens,
        units: { questions: d.plan.length, images: d.images, billed_micros: charged },
      });
      return result;
    }),
  ];
}
