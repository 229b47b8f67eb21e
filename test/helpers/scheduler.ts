import type { Worker } from 'bullmq';
import { expect } from 'chai';
import { adminCall } from './admin';
import { pools } from './pools';
import { waitFor } from './wait';
import { env } from './harness';
import type { QueueName } from '../../shared/queues/names';

/** The in-process worker of a queue (started by the root hooks). */
export function workerOf(queue: QueueName): Worker {
  const w = pools().workers.find((x) => x.name === queue);
  if (!w) throw new Error(`no in-process worker for ${queue}`);
  return w;
}

/** Waiting + prioritized jobs of a queue, as the pod's admission check counts them. */
export async function backlog(queue: QueueName): Promise<number> {
  const c = await env().gw.ctx.queues.get(queue).getJobCounts('waiting', 'prioritized');
  return (c.waiting ?? 0) + (c.prioritized ?? 0);
}

/**
 * Writes a queue's scheduler-endpoints row through the management API (create, or PATCH when it
 * exists) and returns its id; `drop` deletes it so the defaults apply again.
 */
export function schedulerRows(admin: () => { url: string; key: string }) {
  const req = (method: string, path: string, json?: unknown) => adminCall(admin().url, admin().key, method, `/admin/v1${path}`, json);
  return {
    async put(queue: QueueName, fields: Record<string, unknown>): Promise<string> {
      const list = await req('GET', `/scheduler-endpoints?queue=${queue}`);
      expect(list.status, list.text).to.equal(200);
      const existing = list.body.data[0] as { id: string } | undefined;
      const r = existing ? await req('PATCH', `/scheduler-endpoints/${existing.id}`, fields) : await req('POST', '/scheduler-endpoints', { queue, ...fields });
      expect(r.status, r.text).to.be.oneOf([200, 201]);
      return r.body.id as string;
    },
    async drop(queue: QueueName): Promise<void> {
      const list = await req('GET', `/scheduler-endpoints?queue=${queue}`);
      for (const row of list.body.data as Array<{ id: string }>) {
        const r = await req('DELETE', `/scheduler-endpoints/${row.id}`);
        expect(r.status, r.text).to.be.oneOf([200, 204]);
      }
    },
  };
}

/** Polls `check` while `work` runs; returns work's result and the largest value seen. */
export async function peakWhile<T>(check: () => Promise<number>, work: Promise<T>, every = 15): Promise<{ result: T; peak: number }> {
  let peak = 0;
  let done = false;
  const watcher = (async () => {
    while (!done) {
      peak = Math.max(peak, await check());
      await new Promise((r) => setTimeout(r, every));
    }
  })();
  const result = await work.finally(() => {
    done = true;
  });
  await watcher;
  return { result, peak };
}

export { waitFor };
