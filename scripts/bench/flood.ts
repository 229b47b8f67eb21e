import { spawn } from 'child_process';
import path from 'path';
import { runLoad, pct, type Sample } from './load';
import type { RedisClient } from '../../shared/redis/connection';
import { JobEvents } from './job-events';

/**
 * The bench's `flood` cell (issue 29 part 4, fair share under a flood): one organization keeps
 * `inFlight` chat requests in flight (four times the chat workers' slots by default) from a process
 * of its own, while a quiet organization sends one request at a time (or `quietConcurrency`); the quiet organization's
 * latency is measured alone and then under the flood. Where the requests waited is read back from
 * BullMQ's events streams of every chat shard (a completed job is removed at once; job-events.ts):
 * added (by the pod) to active (a worker took it: the wait for a slot) to completed (the worker's run,
 * the upstream call included); the rest of the client's time is the pod's and the network's. The quiet
 * org's jobs are those whose request ids its replies carried; the flooding org's are all the others.
 */
export interface FloodSetup {
  gatewayUrl: string;
  floodKey: string;
  floodOrgId: string;
  quietKey: string;
  quietOrgId: string;
  /** The quiet org's request body. */
  body: object;
  /** The flooding org's (default: the quiet org's). */
  floodBody?: object;
  inFlight: number;
  /** The quiet org's requests at once (default 1). */
  quietConcurrency?: number;
  seconds: number;
  redis: RedisClient;
  /** The key prefix in Redis of every shard of the chat-interactive queue, `<bull prefix of the shard>:<shard>`. */
  queueKeys: string[];
  /**
   * The quiet org's request sent straight to the upstream (the simulator, no gateway), after each
   * phase for half its seconds: how much the machine alone, carrying the flood, stretches a request
   * that never meets the gateway (the simulator shares the cores with everything).
   */
  direct?: { url: string; body: object };
}

export interface Stages {
  n: number;
  client: [number, number];
  slotWait: [number, number];
  run: [number, number];
  rest: [number, number];
  /** The quiet org's only (its requests' send times are known): request sent → job added, and job completed → reply read. */
  podIn?: [number, number];
  podOut?: [number, number];
}

const p50p99 = (v: number[]): [number, number] => [pct(v, 50), pct(v, 99)];

/** Where the time of the jobs `pick` chooses went, from their events; with `samples`, also the pod's time before and after the job. */
function stagesOf(events: JobEvents, pick: (id: string) => boolean, client: number[], samples?: Sample[]): Stages {
  const wait: number[] = [];
  const run: number[] = [];
  for (const [id, t] of events.jobs) {
    if (!pick(id) || t.added === undefined || t.active === undefined || t.completed === undefined) continue;
    wait.push(t.active - t.added);
    run.push(t.completed - t.active);
  }
  const [w, r] = [p50p99(wait), p50p99(run)];
  const c = p50p99(client);
  const stages: Stages = { n: wait.length, client: c, slotWait: w, run: r, rest: [c[0] - w[0] - r[0], c[1] - w[1] - r[1]] };
  if (samples) {
    const [podIn, podOut]: [number[], number[]] = [[], []];
    for (const x of samples) {
      const t = x.requestId ? events.jobs.get(x.requestId) : undefined;
      if (!t || t.added === undefined || t.completed === undefined || x.startedAt === undefined) continue;
      podIn.push(t.added - x.startedAt);
      podOut.push(x.startedAt + x.total - t.completed);
    }
    [stages.podIn, stages.podOut] = [p50p99(podIn), p50p99(podOut)];
  }
  return stages;
}

/** Runs the cell: the quiet organization alone, then under the flood. */
export async function floodCell(s: FloodSetup): Promise<{ alone: Stages; flooded: Stages; flood: Stages; floodRps: number; floodErrors: number; quietErrors: number; direct?: { alone: Stages; flooded: Stages } }> {
  const quietUrl = `${s.gatewayUrl}/v1/chat/completions`;
  const aloneEvents = await JobEvents.follow(s.redis, s.queueKeys);
  const quiet = s.quietConcurrency ?? 1;
  const alone = await runLoad(quietUrl, { 'SERVICE-API-KEY': s.quietKey }, s.body, quiet, s.seconds);
  await aloneEvents.stop();
  const aloneIds = new Set(alone.samples.map((x) => x.requestId));
  const aloneStages = stagesOf(aloneEvents, (id) => aloneIds.has(id), alone.samples.map((x) => x.total), alone.samples);
  const directSeconds = s.direct ? Math.max(2, s.seconds / 2) : 0;
  const probe = async () => {
    const r = await runLoad(s.direct!.url, {}, s.direct!.body, 1, directSeconds);
    const c = p50p99(r.samples.map((x) => x.total));
    return { n: r.samples.length, client: c, slotWait: [0, 0], run: [0, 0], rest: c } as Stages;
  };
  const directAlone = s.direct ? await probe() : undefined;

  const child = spawn(process.execPath, [path.join(__dirname, 'flood-load.js'), quietUrl, s.floodKey, JSON.stringify(s.floodBody ?? s.body), String(s.inFlight), String(s.seconds + 2 + directSeconds)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise((r) => setTimeout(r, 1500)); // the flood reaches its in-flight count
  const events = await JobEvents.follow(s.redis, s.queueKeys);
  const flooded = await runLoad(quietUrl, { 'SERVICE-API-KEY': s.quietKey }, s.body, quiet, s.seconds, 0);
  const directFlooded = s.direct ? await probe() : undefined;
  await ended;
  await events.stop();
  const quietIds = new Set(flooded.samples.map((x) => x.requestId));
  const flood = JSON.parse(out.trim() || '{"completed":0,"errors":0,"seconds":1,"totals":[]}') as { completed: number; errors: number; seconds: number; totals: number[] };
  return {
    alone: aloneStages,
    flooded: stagesOf(events, (id) => quietIds.has(id), flooded.samples.map((x) => x.total), flooded.samples),
    flood: stagesOf(events, (id) => !quietIds.has(id), flood.totals),
    floodRps: flood.completed / flood.seconds,
    floodErrors: flood.errors,
    quietErrors: alone.errors + flooded.errors,
    ...(directAlone && directFlooded ? { direct: { alone: directAlone, flooded: directFlooded } } : {}),
  };
}

/** Table rows: quiet org alone and under the flood, p50/p99 of the client's time and of each stage. */
export function floodRows(r: Awaited<ReturnType<typeof floodCell>>, inFlight: number): string[][] {
  const pair = (v: [number, number] | undefined) => (v ? [v[0].toFixed(2), v[1].toFixed(2)] : ['-', '-']);
  const row = (name: string, s: Stages) => [name, String(s.n), ...[s.client, s.slotWait, s.run, s.rest, s.podIn, s.podOut].flatMap(pair)];
  return [
    row('quiet org alone', r.alone),
    row(`quiet org, flood of ${inFlight} in flight`, r.flooded),
    row(`the flooding org (${r.floodRps.toFixed(0)} req/s, ${r.floodErrors} errors)`, r.flood),
    ...(r.direct ? [row('upstream direct, alone (no gateway)', r.direct.alone), row('upstream direct, under the flood', r.direct.flooded)] : []),
  ];
}

export const FLOOD_HEAD = ['cell', 'jobs', 'client p50 ms', 'client p99 ms', 'slot wait p50', 'slot wait p99', 'worker run p50', 'worker run p99', 'rest p50', 'rest p99', 'pod in p50', 'pod in p99', 'pod out p50', 'pod out p99'];
