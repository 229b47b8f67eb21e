import { Op } from 'sequelize';
import { SchedulerEndpoint } from '../db/models';
import type { QueueName } from './names';

/**
 * The operator's scheduling settings for one queue (management API family `scheduler-endpoints`).
 * Null fields mean "use the default": the env-configured worker concurrency, a priority step of 1,
 * no waiting cap.
 */
export interface QueueSettings {
  concurrency: number | null;
  priorityStep: number;
  maxWaiting: number | null;
  enabled: boolean;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = { concurrency: null, priorityStep: 1, maxWaiting: null, enabled: true };

function fromRow(row: SchedulerEndpoint): QueueSettings {
  return {
    concurrency: row.concurrency,
    priorityStep: row.priorityStep ?? 1,
    maxWaiting: row.maxWaiting,
    enabled: row.enabled,
  };
}

/** Settings of the named queues (one query); a queue without a row gets the defaults. */
export async function loadQueueSettings(queues: readonly QueueName[]): Promise<Map<QueueName, QueueSettings>> {
  const rows = await SchedulerEndpoint.findAll({ where: { queue: { [Op.in]: [...queues] } } });
  const out = new Map<QueueName, QueueSettings>(queues.map((q) => [q, DEFAULT_QUEUE_SETTINGS]));
  for (const row of rows) out.set(row.queue as QueueName, fromRow(row));
  return out;
}
