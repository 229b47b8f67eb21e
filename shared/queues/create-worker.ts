import { DeadlineTimer } from '../deadline-timer';
import type { CancelSignal } from '../cancel-source';
import { Worker, UnrecoverableError, WaitingError, type Job } from 'bullmq';
import { keys } from '../redis/keys';
import type { QueueName } from './names';
import { expressShardsOf, shardConcurrency, shardsOf } from './shards';
import type { JobData, JobResult } from './payloads';
import { ApiError, toWire, type WireError } from '../errors/ApiError';
import { errors } from '../errors/codes';
import { asUnavailable } from '../errors/unavailable';
import { config } from '../config/env';
import { logger } from '../logger';
import { jobDuration } from '../metrics';
import type { WorkerRuntime } from '../../workers/runtime';
import { jobUsage, type UsageFields, type UsageRecord } from '../metering/usage';
import { childSpan, traceIdOf, type SpanHandle } from '../tracing/trace';
import { jobSpan, traceUsage } from '../tracing/job-spans';
import { ROUTE_RESULT_KEY, withRoute, type RouteMeta } from './route-meta';
import { RouteReport } from './route-report';
import { merged } from '../merged';

export interface JobContext {
  /**
   * Aborted when the client disconnects or the deadline passes. Not an AbortSignal: `realSignal` makes
   * one for an API that requires it (shared/cancel-source.ts).
   */
  signal: CancelSignal;
  /** Streams one chunk to the waiting pod (in order). */
  emit(chunk: string): void;
  /**
   * States the request's one usage event. It is added to the usage outbox atomically with the
   * result publish, and only if the processor succeeds; a later call replaces an earlier one.
   */
  usage(modality: string, fields: UsageFields): void;
  /** The job's span (a no-op when tracing is off): upstream attempts hang under it. */
  span: SpanHandle;
  /**
   * States where a model pool's router stands (the deployment of its latest attempt): whatever the
   * job then fails with (an upstream's answer, an exception of any kind, the deadline, a store gone
   * away), the failure carries it as `x-service-*` headers; a job that runs long also tells its pod
   * (route-report.ts), for the answers the pod gives without it (its own 504, worker_lost).
   */
  route(meta: RouteMeta): void;
}

export type JobProcessor<Q extends QueueName> = (job: Job<JobData<Q>, JobResult>, ctx: JobContext) => Promise<unknown>;

function wireOf(err: unknown, signal: CancelSignal): WireError {
  if (err instanceof ApiError) return toWire(err);
  if (signal.aborted) return { status: 499, code: 'client_closed_request', message: 'The client cancelled the request.' };
  const down = asUnavailable(err); // the worker's Redis or Postgres went away mid-job: retryable, not the request's fault
  if (down) return toWire(down);
  logger.error({ err }, 'job failed with an unexpected error');
  return toWire(errors.upstreamError('The request failed in the worker.'));
}

/**
 * The request log row of a job that succeeded, carried in its usage record (one outbox entry): the
 * pod's context from the envelope, the times measured here (lane: arrival to admission; queue: job
 * added to job started; first byte: arrival to the first chunk, or to the result when not streamed;
 * total: arrival to the result), and the router's deployment and attempts when a pool served it.
 */
function withLog(usage: UsageRecord, job: Job<JobData<QueueName>, JobResult>, started: number, firstChunkAt: number | undefined, result: unknown): UsageRecord {
  const ctx = job.data.log;
  if (!ctx) return usage;
  const now = Date.now();
  const route = (result as Record<string, unknown> | null)?.[ROUTE_RESULT_KEY] as RouteMeta | undefined;
  return merged(usage, {
    log: merged(ctx, {
      traceId: traceIdOf(job.data.trace) ?? ctx.traceId ?? null,
      status: 200,
      stream: job.data.stream,
      attempts: route?.attempts ?? 1,
      // the usage event's name of it (`<fallback model>/<deployment>` when a fallback served), else the router's
      deployment: usage.deployment ?? route?.deployment ?? null,
      laneMs: ctx.admittedAt === undefined ? null : ctx.admittedAt - ctx.receivedAt,
      queueMs: started - job.timestamp,
      ttfbMs: (firstChunkAt ?? now) - ctx.receivedAt,
      totalMs: now - ctx.receivedAt,
      cachedTokens: usage.cachedTokens ?? null,
      reasoningTokens: usage.reasoningTokens ?? null,
    }),
  });
}

/**
 * Wraps a pool's processor with the parts every job shares: deadline check, cancellation, chunk
 * sequencing, publishing the result (with the usage event the processor stated, into the usage
 * outbox in the same script) or error to the pod, and never letting BullMQ retry.
 * A stalled job (its worker died) fails at once (maxStalledCount 0); the pod reads that and answers.
 */
export function createWorker<Q extends QueueName>(
  rt: WorkerRuntime,
  queue: Q,
  concurrency: number,
  processor: JobProcessor<Q>,
  shard: string = queue,
): Worker<JobData<Q>, JobResult> {
  const lockMs = config().jobLockMs;
  /** The labels of a finished job, one object for the queue's life. */
  const okLabels = { queue, outcome: 'ok' };
  const worker: Worker<JobData<Q>, JobResult> = new Worker<JobData<Q>, JobResult>(
    shard,
    async (job, token) => {
      if (worker.isPaused()) {
        // paused by the scheduler settings while a blocking fetch was in flight: hand the job back
        await job.moveToWait(token);
        throw new WaitingError();
      }
      const data = job.data;
      const started = Date.now();
      const controller = rt.cancels.track(job.id!);
      const timer = new DeadlineTimer(data.deadline, () => controller.abort(errors.deadline()));
      const chunks: string[] = [];
      let firstChunkAt: number | undefined;
      let usage: UsageRecord | undefined;
      let route: RouteMeta | undefined;
      let report: RouteReport | undefined;
      const span = jobSpan(queue, job, started);
      let reply: SpanHandle | undefined;
      try {
        if (Date.now() >= data.deadline) throw errors.deadline();
        if (controller.aborted) throw controller.reason;
        const result = await processor(job, {
          signal: controller,
          emit: (chunk) => {
            const seq = chunks.push(chunk) - 1;
            firstChunkAt ??= Date.now();
            // a lost chunk is recovered by the pod from the job's stored chunks when the result arrives
            rt.replies.chunk(data.replyTo, job.id!, seq, chunk).catch(() => undefined);
          },
          usage: (modality, fields) => {
            usage = jobUsage(data, modality, fields);
          },
          span,
          route: (m) => {
            route = m;
            // the pod is told too when the job runs long (route-report.ts); a stream that began told it with its first chunk
            report ??= new RouteReport(data.deadline, (r) => {
              if (!chunks.length) rt.replies.route(data.replyTo, job.id!, r).catch(() => undefined);
            });
            report.note(m);
          },
        });
        if (usage) usage = withLog(usage, job, started, firstChunkAt, result);
        reply = childSpan('reply', span);
        if (usage) traceUsage(usage, span, reply, traceIdOf(data.trace));
        // a batch line's usage goes with its answer to the batch runner, which bills it (docs/batches.md)
        await rt.replies.result(data.replyTo, job.id!, chunks.length, result, usage, chunks, !!(data.batch || data.carryUsage), data.replyEpoch, !!data.replyTail);
        jobDuration.observe(okLabels, (Date.now() - started) / 1000);
        // The answer is kept once, by the publishing script (reply-store.ts), not as the job's return
        // value, which BullMQ would store in the job and copy into its 'completed' event.
        return {};
      } catch (err) {
        // An aborted job ended because of the abort (the client cancelled: 499; the deadline: 504),
        // whatever the attempt in flight threw when its connection was cut (an upstream_error)
        const reason = controller.aborted ? controller.reason : err;
        const wire = withRoute(wireOf(reason, controller), route);
        jobDuration.observe({ queue, outcome: wire.code }, (Date.now() - started) / 1000);
        // What an operator acts on (an upstream down, a platform credential refused): the code and
        // status only, never the message, which can quote an upstream's body or the caller's input.
        if (wire.status >= 500 || wire.code.endsWith('_auth_failed')) logger.warn({ requestId: job.id, queue, code: wire.code, status: wire.status }, 'job failed');
        span.fail(wire.code);
        // the queue time goes with the error: the pod writes the failed request's row
        await rt.replies.error(data.replyTo, job.id!, merged(wire, { queueMs: started - job.timestamp })).catch(() => undefined);
        throw new UnrecoverableError(JSON.stringify(wire));
      } finally {
        report?.stop();
        reply?.end(); // also when the publish threw
        span.end();
        timer.clear();
        rt.cancels.untrack(job.id!);
      }
    },
    {
      connection: rt.bull,
      prefix: keys.bullPrefix(shard),
      autorun: false, // started by startPools once the scheduler settings are applied
      concurrency,
      name: config().podId, // stored on each job it takes (processedBy): which process runs a job
      lockDuration: lockMs,
      stalledInterval: lockMs,
      maxStalledCount: 0,
      removeOnComplete: { age: 120, count: 20_000 },
      removeOnFail: { age: 3600, count: 20_000 },
    },
  );
  return worker;
}

/**
 * `createWorker` for every shard of a queue (QUEUE_SHARDS_CHAT): one BullMQ worker per shard, so
 * every worker process of the pool takes jobs from every shard; `concurrency` is the process's total
 * for the queue, split evenly over the shards (shardConcurrency).
 */
export function createShardWorkers<Q extends QueueName>(rt: WorkerRuntime, queue: Q, concurrency: number, processor: JobProcessor<Q>): Array<Worker<JobData<Q>, JobResult>> {
  const shards = shardsOf(queue);
  return shards.map((shard) => createWorker(rt, queue, shardConcurrency(concurrency, shards.length), processor, shard));
}

/**
 * The express workers of a queue (shared/queues/express.ts): one BullMQ worker per express shard, the
 * process's express slots split evenly over them as a queue's concurrency is over its shards.
 */
export function createExpressWorkers<Q extends QueueName>(rt: WorkerRuntime, queue: Q, slots: number, processor: JobProcessor<Q>): Array<Worker<JobData<Q>, JobResult>> {
  const shards = expressShardsOf(queue);
  return shards.map((shard) => createWorker(rt, queue, shardConcurrency(slots, shards.length), processor, shard));
}
