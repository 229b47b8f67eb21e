import type { RedisClient } from '../redis/connection';
import { Queues } from '../queues/queues';
import { ALL_QUEUES } from '../queues/names';
import { outboxStats } from '../metering/usage-outbox';
import { keys } from '../redis/keys';
import { fail, ok, warn, type Check } from './check';

/** An outbox entry older than this means no worker process is draining it. */
const OUTBOX_WARN_SECONDS = 60;
const OUTBOX_FAIL_SECONDS = 900;
/** Active jobs looked at per queue for a missing lock. */
const ACTIVE_SAMPLE = 200;

/**
 * Queue health for `gateway doctor`: stalled jobs (active, lock gone: their worker died), failed
 * jobs and usage dead letters, and the age of the usage outbox's oldest entry.
 */
export async function checkQueues(redis: RedisClient): Promise<Check[]> {
  const queues = new Queues(redis);
  try {
    let stalled = 0;
    let failed = 0;
    const stalledIn: string[] = [];
    for (const q of ALL_QUEUES.flatMap((name) => queues.shards(name))) {
      const name = q.name;
      failed += (await q.getJobCounts('failed')).failed ?? 0;
      const active = await q.getActive(0, ACTIVE_SAMPLE - 1);
      const locks = await Promise.all(active.map((j) => redis.exists(q.toKey(`${j.id}:lock`))));
      const n = locks.filter((l) => l === 0).length;
      if (n) stalledIn.push(`${name}: ${n}`);
      stalled += n;
    }
    const out = await outboxStats(redis);
    const age = Math.round(out.oldestAgeSeconds);
    const checks: Check[] = [
      stalled
        ? warn('stalled jobs', `${stalled} active job(s) have lost their worker (${stalledIn.join(', ')}): they are retried once a worker of that pool runs; check that pool's worker processes`)
        : ok('stalled jobs', 'none'),
      failed
        ? warn('failed jobs', `${failed} job(s) in the queues' failed sets: look at them in the admin app's /admin/queues`)
        : ok('failed jobs', 'none'),
      out.deadLetters
        ? warn('usage dead letters', `${out.deadLetters} usage event(s) Postgres refused sit in ${keys.usageDeadLetters()}: read them with \`redis-cli XRANGE ${keys.usageDeadLetters()} - +\``)
        : ok('usage dead letters', 'none'),
    ];
    const outbox = `${out.entries} entr${out.entries === 1 ? 'y' : 'ies'}, oldest ${age}s`;
    if (age > OUTBOX_FAIL_SECONDS) checks.push(fail('usage outbox', `${outbox}: no worker process is draining usage into Postgres; start a worker process (each one drains)`));
    else if (age > OUTBOX_WARN_SECONDS) checks.push(warn('usage outbox', `${outbox}: draining is behind; check the worker processes`));
    else checks.push(ok('usage outbox', outbox));
    return checks;
  } finally {
    await queues.close();
  }
}
