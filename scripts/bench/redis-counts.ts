import { isCluster, type RedisClient } from '../../shared/redis/connection';

/**
 * What one request costs Redis, counted rather than timed: INFO commandstats (calls per command,
 * commands run inside Lua scripts included) and the bytes clients wrote to the server
 * (`total_net_input_bytes`), read before and after a cell and divided by its requests. Single-node
 * Redis only (on a cluster the per-master spread is cluster-spread.ts's job).
 */
export interface RedisCounts {
  calls: Record<string, number>;
  /** µs Redis spent in each command (a script's own time includes the commands it ran). */
  usec: Record<string, number>;
  inputBytes: number;
}

export async function readRedisCounts(redis: RedisClient): Promise<RedisCounts | undefined> {
  if (isCluster(redis)) return undefined;
  const [stats, net] = await Promise.all([redis.info('commandstats'), redis.info('stats')]);
  const calls: Record<string, number> = {};
  const usec: Record<string, number> = {};
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    calls[m[1]] = Number(m[2]);
    usec[m[1]] = Number(m[3]);
  }
  return { calls, usec, inputBytes: Number(/^total_net_input_bytes:(\d+)/m.exec(net)?.[1] ?? 0) };
}

/** The commands named in the bench's table, in this order; every other command is in `other`. */
const SHOWN = ['evalsha', 'xadd', 'spublish', 'publish', 'bzpopmin'];

/** Every command called (not the bench's own INFO readings) and the bytes clients wrote between two readings. */
export function totalsBetween(before: RedisCounts, after: RedisCounts): { commands: number; bytes: number } {
  const commands = Object.keys(after.calls).reduce((s, c) => s + (c === 'info' ? 0 : after.calls[c] - (before.calls[c] ?? 0)), 0);
  return { commands, bytes: after.inputBytes - before.inputBytes };
}

/** Per request between two readings: the shown commands, all others, every command, bytes written. */
export function perRequest(before: RedisCounts | undefined, after: RedisCounts | undefined, requests: number): string[] {
  if (!before || !after || !requests) return [...SHOWN, 'other', 'all', 'bytes'].map(() => '-');
  const delta = (c: string) => (after.calls[c] ?? 0) - (before.calls[c] ?? 0);
  const { commands: all, bytes } = totalsBetween(before, after);
  const shown = SHOWN.map(delta);
  const other = all - shown.reduce((s, v) => s + v, 0);
  return [...shown, other, all, bytes].map((v) => (v / requests).toFixed(2));
}

export const REDIS_COUNT_HEAD = [...SHOWN, 'other', 'all commands', 'bytes written'];

/**
 * Every command's calls per request between two readings, most first, with the µs Redis spent in it
 * per request (`BENCH_REDIS_DETAIL=1`; a script's µs include the commands it ran, which are listed too).
 */
export function detail(before: RedisCounts | undefined, after: RedisCounts | undefined, requests: number): string {
  if (!before || !after || !requests) return '';
  return Object.keys(after.calls)
    .map((c) => [c, ((after.calls[c] ?? 0) - (before.calls[c] ?? 0)) / requests] as const)
    .filter(([c, v]) => v > 0.005 && c !== 'info')
    .sort((a, b) => b[1] - a[1])
    .map(([c, v]) => `${c} ${v.toFixed(2)} (${(((after.usec[c] ?? 0) - (before.usec[c] ?? 0)) / requests).toFixed(1)} µs)`)
    .join(', ');
}
