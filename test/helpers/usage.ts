import { env } from './harness';
import { outboxStats } from '../../shared/metering/usage-outbox';
import { waitFor } from './wait';

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
