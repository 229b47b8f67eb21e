import fs from 'fs';
import { isCluster, type RedisClient } from '../../shared/redis/connection';

/** Linux clock ticks per second for /proc times (USER_HZ is 100 on every mainstream kernel). */
const TICKS_PER_S = 100;

/** CPU time (user + system, ms) a process has used so far; 0 where /proc is unavailable. */
export function processCpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
  } catch {
    return 0;
  }
}

/**
 * Read-type and write-type system calls a process has made so far (/proc/<pid>/io: socket reads and
 * writes, `writev` included); zeros where /proc is unavailable. On loopback each socket write also
 * wakes its reader, which is why the bench counts them (docs/benchmark.md).
 */
export function processSyscalls(pid: number | undefined): { reads: number; writes: number } {
  if (!pid) return { reads: 0, writes: 0 };
  try {
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    const get = (k: string) => Number(new RegExp(`^${k}: (\\d+)`, 'm').exec(io)?.[1] ?? 0);
    return { reads: get('syscr'), writes: get('syscw') };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

/**
 * Context switches a process has made so far (/proc/<pid>/status): `voluntary` counts the times it
 * blocked with nothing to do (an event loop's `epoll_wait` that slept: each is a wake-up later),
 * `involuntary` the times the kernel took a core from it while it ran; zeros where /proc is unavailable.
 */
export function processSwitches(pid: number | undefined): { voluntary: number; involuntary: number } {
  if (!pid) return { voluntary: 0, involuntary: 0 };
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const get = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { voluntary: get('voluntary_ctxt_switches'), involuntary: get('nonvoluntary_ctxt_switches') };
  } catch {
    return { voluntary: 0, involuntary: 0 };
  }
}

/** CPU time (ms) of every Postgres backend serving `database` (backends that ended are not counted). */
export function postgresCpuMs(database: string): number {
  let total = 0;
  for (const pid of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.startsWith('postgres:') && cmd.includes(` ${database} `)) total += processCpuMs(Number(pid));
    } catch {
      /* gone */
    }
  }
  return total;
}

/** CPU time (ms) one Redis server has used, from its INFO cpu section. */
export function cpuMsOfInfo(info: string): number {
  const get = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (get('used_cpu_user') + get('used_cpu_sys')) * 1000;
}

/** CPU time (ms) the Redis server has used, from INFO; on a cluster, every master's added up. */
export async function redisCpuMs(redis: RedisClient): Promise<number> {
  if (!isCluster(redis)) return cpuMsOfInfo(await redis.info('cpu'));
  const infos = await Promise.all(redis.nodes('master').map((n) => n.info('cpu')));
  return infos.reduce((sum, info) => sum + cpuMsOfInfo(info), 0);
}

export interface CpuReading {
  [part: string]: number;
}

/** Reads every part's CPU time now; `diff` turns two readings into µs per request. */
export async function readCpu(parts: { pids: Record<string, number | undefined>; redis: RedisClient; database: string }): Promise<CpuReading> {
  const r: CpuReading = {};
  for (const [name, pid] of Object.entries(parts.pids)) r[name] = processCpuMs(pid);
  r.redis = await redisCpuMs(parts.redis);
  r.postgres = postgresCpuMs(parts.database);
  return r;
}

export function cpuPerRequestUs(before: CpuReading, after: CpuReading, requests: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(after)) out[k] = requests ? ((after[k] - (before[k] ?? 0)) * 1000) / requests : NaN;
  return out;
}
