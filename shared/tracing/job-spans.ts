import type { Job } from 'bullmq';
import type { JobEnvelope } from '../queues/payloads';
import type { UsageRecord } from '../metering/usage';
import { NOOP, span, tracingOn, type SpanHandle } from './trace';
import { A, GEN_AI_OPERATIONS } from './attributes';

/**
 * A job's spans in the worker, continuing the trace its pod started (the context in `job.data.trace`):
 * the time it waited in the queue (from the add to this worker taking it, both clocks' epoch ms) and
 * the job itself, under which the upstream attempts and the reply hang.
 */
export function jobSpan(queue: string, job: Job<JobEnvelope>, started: number): SpanHandle {
  if (!tracingOn()) return NOOP;
  const d = job.data;
  const taken = job.processedOn ?? started;
  const waitedMs = Math.max(0, taken - job.timestamp);
  const messaging = { [A.messagingSystem]: 'bullmq', [A.messagingDestination]: queue, [A.messagingMessageId]: job.id };
  span(`queue ${queue}`, d.trace, { startTime: job.timestamp, attributes: { ...messaging, [A.queueWaitMs]: waitedMs } }).end(taken);
  const operation = (d as { operation?: string }).operation;
  return span(`process ${queue}`, d.trace, {
    kind: 'consumer',
    startTime: taken, // from the take: BullMQ's hand-over to the processor is part of the job
    attributes: {
      ...messaging,
      [A.messagingOperationType]: 'process',
      [A.queueWaitMs]: waitedMs,
      [A.requestId]: d.requestId,
      [A.orgId]: d.orgId,
      [A.lane]: d.lane,
      [A.genAiRequestModel]: d.publicModel,
      [A.genAiOperation]: operation ? GEN_AI_OPERATIONS[operation] : queue === 'embeddings' ? 'embeddings' : undefined,
    },
  });
}

/**
 * Puts the trace on the request's usage record: `traceId` (32 hex; the request log's trace id,
 * read from the job's propagated context even when this worker does not trace) and `traceParent`
 * (the reply span's context: the drainer's usage write continues the trace under it). The job span
 * gets the tokens and the deployment that served.
 */
export function traceUsage(usage: UsageRecord, job: SpanHandle, reply: SpanHandle, carriedTraceId: string | undefined): void {
  const traceId = carriedTraceId ?? job.traceId();
  if (traceId) usage.traceId = traceId;
  const parent = reply.carrier();
  if (parent) usage.traceParent = parent.traceparent;
  if (job.recording) job.set({ [A.genAiInputTokens]: usage.inputTokens, [A.genAiOutputTokens]: usage.outputTokens, [A.deployment]: usage.deployment });
}

/** One `usage write` span per traced record of a drained batch, each in its request's trace. */
export function usageWriteSpans(records: UsageRecord[], started: number): SpanHandle[] | undefined {
  if (!tracingOn()) return undefined;
  const spans: SpanHandle[] = [];
  for (const r of records) {
    if (!r.traceParent) continue;
    spans.push(
      span('usage write', { traceparent: r.traceParent }, {
        kind: 'client',
        startTime: started,
        attributes: { [A.dbSystem]: 'postgresql', [A.dbOperation]: 'INSERT', [A.dbCollection]: 'usage_events', [A.dbBatchSize]: records.length, [A.requestId]: r.requestId },
      }),
    );
  }
  return spans;
}
