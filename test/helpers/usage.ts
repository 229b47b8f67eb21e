import { env } from './harness';
import { outboxStats } from '../../shared/metering/usage-outbox';
import { waitFor } from './wait';
import { pools } from './pools';
import { keys } from '../../shared/redis/keys';
import type { UsageRecord } from '../../shared/metering/usage';
import { QueryTypes } from 'sequelize';
import { db } from '../../shared/db/sequelize';
import { UsageEvent } from '../../shared/db/models';

/**
 * Waits until the usage outbox is empty: every usage event a worker added (with its result, so
 * before the response this test read) has been written to Postgres by a drainer, or dead-lettered.
 * Call it before every assertion on usage rows, including "nothing was billed". Throws on timeout.
 */
export async function usageSettled(ms = 10_000): Promise<void> {
  const settled = await waitFor(async () => {
    const s = await outboxStats(env().redis);
    return s.entries === 0 && s.pending === 0;
  }, ms, 10);
  if (!settled) throw new Error(`usage outbox not drained within ${ms} ms: ${JSON.stringify(await outboxStats(env().redis))}`);
}

/** The usage events the org has been billed, once the outbox is drained (usageSettled): equal before and after a refusal when nothing was billed. */
export async function billedEvents(orgId: string): Promise<number> {
  await usageSettled();
  return UsageEvent.count({ where: { orgId } });
}

/**
 * Runs `run` while the in-process drainer is stopped, and returns what it left in the usage outbox
 * (the records as the workers wrote them), then restarts the drainer. The `usage_events` table
 * cannot show a duplicate (request_id is unique, inserts are ON CONFLICT DO NOTHING); this can.
 */
export async function outboxDuring<T>(run: () => Promise<T>): Promise<{ result: T; records: UsageRecord[] }> {
  await usageSettled();
  await pools().drainer.stop();
  try {
    const result = await run();
    const rows = await env().redis.xrange(keys.usageOutbox(), '-', '+');
    // usage entries only (`u`); request log rows of requests without usage (`l`) are not records
    return { result, records: rows.filter(([, f]) => f[0] === 'u').map(([, f]) => JSON.parse(f[1]) as UsageRecord) };
  } finally {
    await pools().drainer.start();
  }
}

/** A chat usage event of `orgId` as a worker writes it (no key, no project, 5 tokens in, 7 out), `over` on top. */
export function chatUsage(orgId: string, requestId: string, over: Partial<UsageRecord> = {}): UsageRecord {
  return { requestId, orgId, projectId: null, apiKeyId: null, model: 'sim-chat', modality: 'chat', lane: 'interactive', inputTokens: 5, outputTokens: 7, ...over };
}

type Row = Record<string, unknown>;

/**
 * Once the outbox is drained: the request log rows and usage events of request `rid` and of the jobs
 * it ran under `<rid>.…` (a native search request's later turns and searches), by request id.
 */
export async function requestRowsOf(rid: string): Promise<{ rows: Row[]; events: Row[] }> {
  await usageSettled();
  const q = (table: string) => db().query<Row>(`SELECT * FROM ${table} WHERE request_id = :rid OR request_id LIKE :like ORDER BY request_id`,
    { type: QueryTypes.SELECT, replacements: { rid, like: `${rid}.%` } });
  return { rows: await q('request_logs'), events: await q('usage_events') };
}
