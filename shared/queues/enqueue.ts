import type { Queues } from './queues';
import type { QueueName } from './names';
import type { JobData } from './payloads';

/**
 * Removal policy. A completed job goes at once: its answer is kept apart, once, by the worker's
 * publishing script (reply-store.ts), and that is what a pod recovering a missed reply reads, so the
 * job hash (and BullMQ's trimming of the completed set per finish) is not paid for per request. A failed
 * job stays a while: its failedReason is the error a recovering pod answers with.
 */
const KEEP_FAILED = { age: 3600, count: 20_000 };

/**
 * The one function that adds a job. The pod picks the job id (the request id) so it can register
 * for the reply before the job exists; on a sharded queue the id also picks the shard (shards.ts). Jobs are never retried by BullMQ: adapters retry what is safe.
 * `weight` is the org's outstanding jobs in the lane (its lane leases, counted over every shard); a higher weight means a lower priority, so the
 * org with the fewest jobs in flight goes first when workers are saturated. `priorityStep` (the
 * queue's scheduler setting, default 1) multiplies the weight: 0 makes the queue plain FIFO.
 * `bullQueue`: the BullMQ queue the pod chose (an express shard, express.ts, or the shard the id picks, the default).
 */
export async function enqueue<Q extends QueueName>(queues: Queues, queue: Q, data: JobData<Q>, weight: number, priorityStep = 1, bullQueue?: string): Promise<void> {
  const q = bullQueue ? queues.get<Q>(bullQueue) : queues.forJob(queue, data.requestId);
  await q.add(queue as never, data as never, {
    jobId: data.requestId,
    priority: Math.min(1 + weight * priorityStep, 2_000_000),
    attempts: 1,
    removeOnComplete: true,
    removeOnFail: KEEP_FAILED,
  });
}
