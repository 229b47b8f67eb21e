import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import type { QueueName } from '../../shared/queues/names';
import type { JobData, JobEnvelope } from '../../shared/queues/payloads';
import { enqueue } from '../../shared/queues/enqueue';
import { cancelJob } from '../../shared/queues/cancel';
import { ApiError, fromWire, type WireError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';
import { config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { ClientGone } from '../../shared/errors/ClientGone';
import { laneRejections, queueRejections } from '../../shared/metrics';

export interface RunJobOptions<Q extends QueueName> {
  queue: Q;
  /** Lease scope: pool and lane, and the org's count there. */
  pool: string;
  lane: string;
  limit: number;
  /** The error to answer when the org is at its lane count. */
  overLimit: (retryAfterMs: number) => ApiError;
  /** Job fields beyond the envelope. */
  data: Omit<JobData<Q>, keyof JobEnvelope>;
  publicModel: string;
  stream?: boolean;
  timeoutMs?: number;
  timeoutError?: () => ApiError;
  /** Stream mode: receives each chunk, in order, as it arrives. */
  onChunk?: (data: string) => void;
  /**
   * A second admission step after the lane lease (e.g. a gateway-wide ceiling): throws to refuse,
   * or returns what releases it when the request ends.
   */
  alsoAdmit?: () => Promise<() => Promise<unknown>>;
}

export { ClientGone };

/** Retry-After (seconds) when a queue is at its operator-set waiting cap. */
const BACKLOG_RETRY_AFTER_S = 1;

/** Jobs waiting for a worker on the queue (waiting + prioritized; running jobs do not count). */
async function queueBacklog(ctx: AppContext, queue: QueueName): Promise<number> {
  const c = await ctx.queues.get(queue).getJobCounts('waiting', 'prioritized');
  return (c.waiting ?? 0) + (c.prioritized ?? 0);
}

/** Who a queued job runs for: the authenticated request's identity. */
export interface JobCaller {
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  /** The job id (the request id). */
  requestId: string;
}

/**
 * The path every queued endpoint shares: take a lane lease, add the job, hold the connection until
 * the reply (or each chunk) arrives on the pod's channel. A client that disconnects cancels the job;
 * the lease is released however the request ends.
 */
export async function runJob<Q extends QueueName>(ctx: AppContext, req: Request, res: Response, opts: RunJobOptions<Q>): Promise<unknown> {
  const auth = req.auth!;
  const gone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) gone.abort(new ClientGone());
  };
  res.on('close', onClose);
  try {
    return await runQueued(ctx, { orgId: auth.orgId, projectId: auth.projectId, apiKeyId: auth.keyId, requestId: req.id }, gone.signal, opts);
  } finally {
    res.off('close', onClose);
  }
}

/**
 * `runJob` without an HTTP exchange (MCP tools, native search inside another request): `signal`
 * plays the client disconnect. Aborting it cancels the job and rejects with the signal's reason
 * (ClientGone when none is given).
 */
export async function runQueued<Q extends QueueName>(ctx: AppContext, who: JobCaller, signal: AbortSignal | undefined, opts: RunJobOptions<Q>): Promise<unknown> {
  const settings = await ctx.directory.queueSettings(opts.queue);
  if (settings.maxWaiting !== null && (await queueBacklog(ctx, opts.queue)) >= settings.maxWaiting) {
    queueRejections.inc({ queue: opts.queue });
    throw opts.overLimit(BACKLOG_RETRY_AFTER_S);
  }
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new ClientGone();
  const admitted = await ctx.leases.acquire(who.orgId, opts.pool, opts.lane, opts.limit);
  if (!admitted.granted) {
    laneRejections.inc({ pool: opts.pool, lane: opts.lane });
    throw opts.overLimit(admitted.retryAfterMs / 1000);
  }
  const lease = admitted.lease;
  const jobId = who.requestId;
  const deadline = Date.now() + (opts.timeoutMs ?? config().requestTimeoutMs);
  let settled = false;
  let releaseAlso: (() => Promise<unknown>) | undefined;

  try {
    if (opts.alsoAdmit) releaseAlso = await opts.alsoAdmit();
    return await new Promise<unknown>((resolve, reject) => {
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const cancel = () => void cancelJob(ctx.redis, ctx.queues, opts.queue, jobId).catch((err) => logger.warn({ err }, 'cancel failed'));
      const onAbort = () => {
        ctx.replies.unregister(jobId);
        cancel();
        settle(() => reject(signal?.reason instanceof Error ? signal.reason : new ClientGone()));
      };
      if (signal?.aborted) {
        settle(() => reject(signal.reason instanceof Error ? signal.reason : new ClientGone()));
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });

      ctx.replies.register(
        jobId,
        opts.queue,
        {
          onChunk: opts.onChunk,
          onResult: (r) => settle(() => resolve(r)),
          onError: (w: WireError) => settle(() => reject(fromWire(w))),
        },
        deadline,
        () => {
          cancel();
          settle(() => reject(opts.timeoutError ? opts.timeoutError() : errors.deadline()));
        },
      );

      const data = {
        ...opts.data,
        requestId: jobId,
        replyTo: ctx.replies.channel,
        deadline,
        orgId: who.orgId,
        projectId: who.projectId,
        apiKeyId: who.apiKeyId,
        publicModel: opts.publicModel,
        lane: opts.lane,
        stream: !!opts.stream,
      } as unknown as JobData<Q>;
      enqueue(ctx.queues, opts.queue, data, lease.heldBefore, settings.priorityStep).catch((err) => {
        ctx.replies.unregister(jobId);
        settle(() => reject(err));
      });
    });
  } finally {
    void ctx.leases.release(lease).catch((err) => logger.warn({ err }, 'lease release failed'));
    if (releaseAlso) void releaseAlso().catch((err) => logger.warn({ err }, 'lease release failed'));
  }
}
