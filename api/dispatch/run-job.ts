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
import { claimHeldUsage, giveUp } from '../../shared/metering/usage-outbox';
import type { UsageRecord } from '../../shared/metering/usage';
import { NO_HOLD, type LimitHold } from '../../shared/limits/limits';
import { childSpan, NOOP, type SpanHandle } from '../../shared/tracing/trace';
import { A } from '../../shared/tracing/attributes';
import type { LogContext } from '../../shared/metering/request-log';
import { logContext, logState } from '../middleware/request-log';
import { merged } from '../../shared/merged';
import { routeHeaders } from '../../shared/queues/route-meta';
import { shardForJob } from '../../shared/queues/shards';
import { CancelSource, type CancelSignal } from '../../shared/cancel-source';

/** How long a pod that lost the race at its deadline waits for the result the worker already sent. */
const LOST_RACE_GRACE_MS = 5_000;

/** Refusals of a request that was never sent (its lane was full): its rate counts are given back. */
const neverSent = new WeakSet<object>();

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
  /**
   * The key's rate limits and budgets (shared/limits): decided before the lane lease, so a refused
   * request holds no lane; the reservation is given back when the request fails, and settled from
   * its usage event when it succeeds.
   */
  reserve?: (requestId: string) => Promise<LimitHold>;
  /**
   * The job's id and usage request id; default the HTTP request's id. A request that runs several
   * jobs (the native search loop's model turns) names each one, since both ids are unique.
   */
  jobId?: string;
  /**
   * One of several jobs of one request (the native search loop's model turns): its usage event bills
   * it, but it has no log row of its own; the request's row, written by its pod when the response
   * closes, carries the totals (api/middleware/request-log.ts, `addToRow`).
   */
  partOfRequest?: boolean;
  /** A batch line's pricing (the batch runner's requests, docs/batches.md). */
  batch?: JobEnvelope['batch'];
  /** runJob: a cancel besides the client's disconnect (an MCP `notifications/cancelled`); rejects with its reason. */
  signal?: AbortSignal;
  /** runJob: the request goes on without its client (a background response's stream): a disconnect cancels nothing; `signal` does. */
  detached?: boolean;
}

export { ClientGone };

/** Passes chunks on and marks the first one on the wait span (time to first byte). */
function firstChunkEvent(wait: SpanHandle, onChunk: ((data: string) => void) | undefined): (data: string) => void {
  let first = true;
  return (data) => {
    if (first) {
      first = false;
      wait.event('first chunk');
    }
    onChunk?.(data);
  };
}

/** Retry-After (seconds) when a queue is at its operator-set waiting cap. */
const BACKLOG_RETRY_AFTER_S = 1;

/** Jobs waiting for a worker on the queue, over all its shards (waiting + prioritized; running jobs do not count). */
async function queueBacklog(ctx: AppContext, queue: QueueName): Promise<number> {
  const c = await ctx.queues.jobCounts(queue, 'waiting', 'prioritized');
  return (c.waiting ?? 0) + (c.prioritized ?? 0);
}

/** Who a queued job runs for: the authenticated request's identity. */
export interface JobCaller {
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  /** The job id (the request id). */
  requestId: string;
  /** The request's span when tracing is on: admit, enqueue and wait become its children. */
  trace?: SpanHandle;
  /** The request log context the job carries (api/middleware/request-log.ts); none: no log row. */
  log?: LogContext;
  /** The job is part of a request whose pod writes the row (RunJobOptions.partOfRequest): its envelope carries no log. */
  rowless?: boolean;
  /**
   * Told the request's timings as they are known, for its row when the pod writes it (a failure, a
   * cancel): the lane admission time as soon as the lease is granted, the job's time in the queue
   * when its worker fails it.
   */
  onTiming?: (t: { admittedAt?: number; queueMs?: number }) => void;
  /** A batch line's usage records: the usage its job's answer carries is added to them (docs/batches.md). */
  carried?: UsageRecord[];
  /** The catalog id the caller's routing-plan alias named (JobEnvelope.usageModel). */
  usageModel?: string;
}

/**
 * The path every queued endpoint shares: take a lane lease, add the job, hold the connection until
 * the reply (or each chunk) arrives on the pod's channel. A client that disconnects cancels the job;
 * the lease is released however the request ends.
 */
export async function runJob<Q extends QueueName>(ctx: AppContext, req: Request, res: Response, opts: RunJobOptions<Q>): Promise<unknown> {
  const auth = req.auth!;
  // the client's disconnect: a CancelSource, no AbortSignal per request (shared/cancel-source.ts)
  const gone = new CancelSource();
  const onClose = () => {
    if (!res.writableFinished && !opts.detached) gone.abort(new ClientGone());
  };
  res.on('close', onClose);
  const onCancel = () => gone.abort(opts.signal!.reason instanceof Error ? opts.signal!.reason : new ClientGone());
  if (opts.signal?.aborted) onCancel();
  else opts.signal?.addEventListener('abort', onCancel, { once: true });
  // a client that left while the handler awaited (an upload stored, a charge held, tokens counted)
  // closed the response before this listener existed: no job is added for it
  if (res.closed) onClose();
  req.trace?.endStep(); // validate ends here
  // a routing plan's alias is recorded (its usage priced, its Activity row named) as the model it names
  const usageModel = auth.modelMap[opts.publicModel];
  const state = logState(res);
  if (state) Object.assign(state, { model: usageModel ?? opts.publicModel, lane: opts.lane, stream: !!opts.stream });
  const log = logContext(req);
  try {
    // the first admission is the request's (a later turn of the native search loop is admitted again)
    const onTiming = (t: { admittedAt?: number; queueMs?: number }) => {
      if (!state) return;
      if (t.admittedAt !== undefined) state.admittedAt ??= t.admittedAt;
      if (t.queueMs !== undefined) state.queueMs = t.queueMs;
    };
    const who = { orgId: auth.orgId, projectId: auth.projectId, apiKeyId: auth.keyId, requestId: opts.jobId ?? req.id, trace: req.trace?.root, log,
      rowless: !!opts.partOfRequest, onTiming, carried: req.batchLine ? (req.batchLine.usage ??= []) : undefined, usageModel };
    const result = await runQueued(ctx, who, gone, opts);
    if (state && !opts.partOfRequest) state.carried = true; // the worker's usage record carries the row
    req.trace?.begin('answer'); // ends when the response does
    return result;
  } finally {
    res.off('close', onClose);
    opts.signal?.removeEventListener('abort', onCancel);
  }
}

/**
 * `runJob` without an HTTP exchange (MCP tools, native search inside another request): `signal`
 * plays the client disconnect. Aborting it cancels the job and rejects with the signal's reason
 * (ClientGone when none is given).
 */
export async function runQueued<Q extends QueueName>(ctx: AppContext, who: JobCaller, signal: CancelSignal | undefined, opts: RunJobOptions<Q>): Promise<unknown> {
  const settings = await ctx.directory.queueSettings(opts.queue);
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new ClientGone();
  const admit = childSpan('admit', who.trace);
  if (admit.recording) admit.set({ [A.pool]: opts.pool, [A.lane]: opts.lane });
  let hold: LimitHold | undefined;
  try {
    hold = opts.reserve ? await opts.reserve(who.requestId) : undefined;
    // the queue's waiting cap refuses after the key's limits, as a full lane does: its 429 carries the
    // key's rate-limit headers like every other refusal of an admitted request, and gives the counts back
    if (settings.maxWaiting !== null && (await queueBacklog(ctx, opts.queue)) >= settings.maxWaiting) {
      queueRejections.inc({ queue: opts.queue });
      const refusal = opts.overLimit(BACKLOG_RETRY_AFTER_S);
      neverSent.add(refusal);
      throw refusal;
    }
    return await runAdmitted(ctx, who, signal, opts, settings, admit, !!hold && hold !== NO_HOLD);
  } catch (err) {
    if (hold) void (neverSent.has(err as object) ? hold.refund() : hold.release()).catch((e) => logger.warn({ err: e }, 'limits release failed'));
    admit.fail(err instanceof ApiError ? err.code : 'error');
    throw err;
  } finally {
    admit.end(); // when runAdmitted has not ended it at the enqueue
  }
}

async function runAdmitted<Q extends QueueName>(
  ctx: AppContext,
  who: JobCaller,
  signal: CancelSignal | undefined,
  opts: RunJobOptions<Q>,
  settings: { priorityStep: number },
  admit: SpanHandle,
  /** A reservation is held on the key's limits under the request id: its usage event settles it. */
  reserved: boolean,
): Promise<unknown> {
  const admitted = await ctx.leases.acquire(who.orgId, opts.pool, opts.lane, opts.limit);
  if (!admitted.granted) {
    laneRejections.inc({ pool: opts.pool, lane: opts.lane });
    const refusal = opts.overLimit(admitted.retryAfterMs / 1000);
    neverSent.add(refusal);
    throw refusal;
  }
  const lease = admitted.lease;
  const jobId = who.requestId;
  // an org with few jobs in flight in the lane (EXPRESS_MAX_IN_FLIGHT) goes to the express slots, within this pod's share (express.ts)
  const express = ctx.express.take(opts.queue, lease.heldBefore, jobId);
  // the BullMQ queue the job goes to, decided once: its add, its cancel and its recovery all use it
  const bullQueue = express ?? shardForJob(opts.queue, jobId);
  const admittedAt = Date.now();
  if (who.log) who.log.admittedAt = admittedAt;
  who.onTiming?.({ admittedAt });
  // The pod's reply channel for this request (its id's, ReplyHub.channelFor); its usage fate, held and kept keys share that channel's slot.
  const replyTo = ctx.replies.channelFor(jobId);
  const deadline = Date.now() + (opts.timeoutMs ?? config().requestTimeoutMs);
  let settled = false;
  let releaseAlso: (() => Promise<unknown>) | undefined;

  try {
    // a second admission's refusal (the gateway-wide audio ceiling) sent nothing either: counts given back
    if (opts.alsoAdmit) releaseAlso = await opts.alsoAdmit().catch((err: unknown) => {
      if (err && typeof err === 'object') neverSent.add(err);
      throw err;
    });
    admit.end();
    const wait = childSpan('wait', who.trace);
    return await new Promise<unknown>((resolve, reject) => {
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        wait.end();
        fn();
      };
      const cancel = () => void cancelJob(ctx.redis, ctx.queues, opts.queue, jobId, bullQueue).catch((err) => logger.warn({ err }, 'cancel failed'));
      const onAbort = () => {
        ctx.replies.unregister(jobId);
        cancel();
        // Not delivered, so not billed: a result the worker publishes from now on carries no usage.
        void giveUp(ctx.redis, replyTo, jobId).catch((err) => logger.warn({ err }, 'give-up mark failed'));
        settle(() => reject(signal?.reason instanceof Error ? signal.reason : new ClientGone()));
      };
      if (signal?.aborted) {
        settle(() => reject(signal.reason instanceof Error ? signal.reason : new ClientGone()));
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });

      // The pod's own 504 forgets the request, naming the route its worker last reported (route-report.ts).
      const timedOut = () => {
        const route = ctx.replies.routeOf(jobId);
        ctx.replies.unregister(jobId);
        const err = opts.timeoutError ? opts.timeoutError() : errors.deadline();
        if (route) Object.assign(err.headers, routeHeaders(route));
        settle(() => reject(err));
      };
      const handlers = {
        onChunk: wait.recording ? firstChunkEvent(wait, opts.onChunk) : opts.onChunk,
        onResult: (r: unknown, recovered?: boolean, usage?: UsageRecord) => {
          // a batch line's usage, carried with its answer: the batch runner bills it with the line
          if (usage && who.carried) who.carried.push(usage);
          // A result recovered from the job may have had its usage held (no pod was listening): bill it now.
          if (!recovered) return settle(() => resolve(r));
          claimHeldUsage(ctx.redis, replyTo, jobId).then(
            () => settle(() => resolve(r)),
            (err) => settle(() => reject(err)),
          );
        },
        onError: (w: WireError) => {
          if (w.queueMs !== undefined) who.onTiming?.({ queueMs: w.queueMs });
          if (!settled) wait.fail(w.code);
          settle(() => reject(fromWire(w)));
        },
      };
      // At the deadline the pod and the worker race: whoever marks the request first decides. If the
      // pod wins, it answers 504 and the worker bills nothing; if the worker already published its
      // result (and usage), the pod waits briefly for that result and delivers it instead.
      const onDeadline = () => {
        giveUp(ctx.redis, replyTo, jobId).then(
          (gaveUp) => {
            if (gaveUp) {
              cancel();
              return timedOut();
            }
            // the worker was first: the request goes on where it stood (chunks delivered stay delivered)
            ctx.replies.resume(jobId, Date.now() + LOST_RACE_GRACE_MS, () => {
              logger.warn({ requestId: jobId }, 'result published but not received within the grace period');
              timedOut();
            });
          },
          () => {
            cancel();
            timedOut(); // Redis unreachable: the worker cannot publish (or bill) either
          },
        );
      };
      try {
        ctx.replies.register(jobId, opts.queue, handlers, deadline, onDeadline, replyTo, bullQueue);
      } catch (err) {
        // a job id this pod already awaits: refused, and the abort listener goes, so that this call
        // can never unregister or cancel the other one's job
        return settle(() => reject(err));
      }

      // merged, not a spread followed by keys: a spread's copy gets a hidden class of its own (shared/merged.ts)
      const data = merged(opts.data, {
        requestId: jobId,
        replyTo,
        replyEpoch: ctx.replies.epochOf(replyTo),
        deadline,
        orgId: who.orgId,
        projectId: who.projectId,
        apiKeyId: who.apiKeyId,
        publicModel: opts.publicModel,
        lane: opts.lane,
        stream: !!opts.stream,
        replyTail: true,
        ...(who.usageModel ? { usageModel: who.usageModel } : {}),
        ...(opts.batch ? { batch: opts.batch } : {}),
        ...(who.carried ? { carryUsage: true } : {}),
        ...(who.log && !who.rowless ? { log: who.log } : {}),
        ...(reserved ? {} : { unreserved: true }),
      }) as unknown as JobData<Q>;
      const sent = who.trace ? childSpan(`send ${opts.queue}`, who.trace, { kind: 'producer' }) : NOOP;
      if (sent.recording) sent.set({ [A.messagingSystem]: 'bullmq', [A.messagingDestination]: opts.queue, [A.messagingOperationType]: 'send', [A.messagingMessageId]: jobId });
      const carrier = sent.carrier();
      if (carrier) data.trace = carrier;
      enqueue(ctx.queues, opts.queue, data, lease.heldBefore, settings.priorityStep, bullQueue).then(
        () => {
          ctx.replies.added(jobId);
          sent.end();
        },
        (err) => {
          sent.fail('enqueue_failed');
          sent.end();
          ctx.replies.unregister(jobId);
          settle(() => reject(err));
        },
      );
    });
  } finally {
    if (express) ctx.express.done(opts.queue);
    void ctx.leases.release(lease).catch((err) => logger.warn({ err }, 'lease release failed'));
    if (releaseAlso) void releaseAlso().catch((err) => logger.warn({ err }, 'lease release failed'));
  }
}
