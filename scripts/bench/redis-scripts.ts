import type { Redis } from 'ioredis';

/**
 * Which Lua scripts Redis spends its time in (`BENCH_REDIS_SCRIPTS=1 npm run bench`): INFO
 * commandstats gives EVALSHA's time as one figure; Redis's slow log, with its threshold at 0, has
 * every call with its own duration and arguments. During a cell the log is read and emptied (one
 * transaction) every 200 ms; each EVALSHA is named by its key count and its first key's last segment (BullMQ's
 * `moveToFinished` is `14 keys, …:wait`; the usage outbox's publish `6 keys, …:outbox`). The log
 * costs Redis time of its own (every command inside a script is logged too), so read the scripts
 * against each other and against the floor's, and take totals from BENCH_REDIS_DETAIL.
 */
export interface ScriptTimes {
  /** name → calls and µs */
  byScript: Map<string, { calls: number; us: number }>;
}

const EVERY_MS = 200;

function scriptName(args: string[]): string {
  const keys = Number(args[2]);
  const first = String(args[3] ?? '');
  return `${keys} keys, …:${first.slice(first.lastIndexOf(':') + 1) || first}`;
}

/** Starts recording; `stop()` restores the slow log's settings and returns what was recorded. */
export async function recordScripts(redis: Redis): Promise<() => Promise<ScriptTimes>> {
  const [, threshold] = (await redis.config('GET', 'slowlog-log-slower-than')) as string[];
  const [, maxLen] = (await redis.config('GET', 'slowlog-max-len')) as string[];
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.config('SET', 'slowlog-max-len', '200000');
  await redis.slowlog('RESET');
  const byScript = new Map<string, { calls: number; us: number }>();
  const drain = async () => {
    // read and emptied in one transaction: nothing logged between the two is lost
    const [[, got]] = (await redis.multi().slowlog('GET', '200000').slowlog('RESET').exec()) as [[Error | null, unknown], unknown];
    const entries = got as Array<[number, number, number, string[]]>;
    for (const [, , us, args] of entries) {
      if (String(args[0]).toLowerCase() !== 'evalsha') continue;
      const name = scriptName(args);
      const s = byScript.get(name) ?? { calls: 0, us: 0 };
      s.calls += 1;
      s.us += us;
      byScript.set(name, s);
    }
  };
  let draining = Promise.resolve();
  const timer = setInterval(() => (draining = draining.then(drain).catch(() => undefined)), EVERY_MS);
  return async () => {
    clearInterval(timer);
    await draining;
    await drain();
    await redis.config('SET', 'slowlog-log-slower-than', threshold);
    await redis.config('SET', 'slowlog-max-len', maxLen);
    return { byScript };
  };
}

/** One line per script, most time first: calls per request, µs per call, µs per request. */
export function scriptLines(t: ScriptTimes, requests: number): string[] {
  return [...t.byScript]
    .sort((a, b) => b[1].us - a[1].us)
    .filter(([, s]) => s.calls / requests >= 0.01)
    .map(([name, s]) => `  ${name}: ${(s.calls / requests).toFixed(2)} a request, ${(s.us / s.calls).toFixed(1)} µs a call, ${(s.us / requests).toFixed(1)} µs a request`);
}
