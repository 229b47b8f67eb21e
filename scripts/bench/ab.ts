import { spawn, type ChildProcess } from 'child_process';
import fs from 'fs';
import path from 'path';
import { ensureServices } from '../services';
import { ensureDatabase } from '../services/postgres';
import { deleteKeysByPrefix } from '../services/redis';
import { freePort } from '../services/free-port';
import { runLoad, pct } from './load';
import { readCpu, cpuPerRequestUs, processSyscalls, processSwitches } from './cpu';
import { benchEnv, exited, streamsInOneWriteIfAsked, waitHttp } from './processes';
import { procfileNodeArgs } from './procfile';
import { readRedisCounts, totalsBetween } from './redis-counts';
import { Redis } from 'ioredis';
import { conversation } from './conversation';

/**
 * `npm run bench:ab`: two stacks, A and B, up side by side and loaded in alternating short slices
 * (A B, B A, A B, ...), so that a drift of the machine between two runs lands on both sides alike.
 * The ratio B/A of each pair of adjacent slices is printed with the medians and the totals; a
 * change shows when most pairs lean the same way. One side at a time is loaded, the other idles.
 *
 * AB_A, AB_B: `gateway` (web and chat worker processes, the Procfile's node flags, an organization
 * whose chat lane takes any load) or `floor` (scripts/bench/floor); default gateway.
 * AB_A_DIST, AB_B_DIST: the built tree each side runs (default this one), e.g. a git worktree's dist.
 * AB_A_ENV, AB_B_ENV: `NAME=value NAME=value` added to that side's processes; AB_A_NODE_ARGS,
 * AB_B_NODE_ARGS: node flags for both its processes, after the Procfile's (a later V8 flag wins);
 * AB_A_WEB_NODE_ARGS, AB_B_WEB_NODE_ARGS: for its web process alone, after those.
 * AB_MODE `json` (default) or `stream`; AB_CONCURRENCY (64); AB_SLICE_SECONDS (2); AB_ROUNDS (10);
 * AB_WARMUP_SECONDS (3): each side's load before the first slice, not counted. AB_PROMPT_BYTES (0: a
 * short prompt): a conversation of about that many bytes instead (a long chat's request body). BENCH_STREAM_ONE_WRITE=1: the
 * simulator sends each stream in one write, as the peer harness's stub does (chat.bench.ts).
 * Each side has its own Redis key prefix and database; the simulator and the Redis and Postgres
 * servers are shared (REDIS_URL and DATABASE_URL when set, else started here).
 * One run at a time (`.data/ab.lock`): two would share the servers, the key prefixes and the databases.
 */
const MODE = process.env.AB_MODE ?? 'json';
const CONCURRENCY = Number(process.env.AB_CONCURRENCY ?? 64);
const SLICE = Number(process.env.AB_SLICE_SECONDS ?? 2);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 10);
const WARMUP = Number(process.env.AB_WARMUP_SECONDS ?? 3);
const PROMPT_BYTES = Number(process.env.AB_PROMPT_BYTES ?? 0);

const here = path.resolve(__dirname, '..', '..');

interface Side {
  name: 'A' | 'B';
  kind: 'gateway' | 'floor';
  dist: string;
  procs: ChildProcess[];
  url: string;
  key: string;
  database: string;
  /** Over every slice: samples, requests sent, seconds, CPU µs by part, Redis commands and bytes written, latencies. */
  totals: { requests: number; completed: number; seconds: number; cpu: Record<string, number>; commands: number; bytes: number; latencies: number[]; syscalls: Array<{ reads: number; writes: number }>; switches: Array<{ voluntary: number; involuntary: number }> };
  slices: { rps: number; cpuUs: number }[];
}

function envList(s: string | undefined): Record<string, string> {
  return Object.fromEntries((s ?? '').split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

function node(dist: string, args: string[], script: string, scriptArgs: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...args, path.join(dist, script), ...scriptArgs], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

function seedSide(env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const c = spawn(process.execPath, [path.join(here, 'scripts/bench/ab-seed.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    c.stdout.on('data', (d) => (out += String(d)));
    c.on('exit', (code) => (code === 0 ? resolve((JSON.parse(out.trim().split('\n').pop() ?? '{}') as { key: string }).key) : reject(new Error(`ab-seed exited with ${code}`))));
  });
}

async function startSide(name: 'A' | 'B', base: { databaseUrl: string; redisUrl: string }, simUrl: string): Promise<Side> {
  const kind = (process.env[`AB_${name}`] ?? 'gateway') as Side['kind'];
  if (kind !== 'gateway' && kind !== 'floor') throw new Error(`AB_${name} must be gateway or floor`);
  const dist = path.resolve(process.env[`AB_${name}_DIST`] ?? here);
  const database = `gateway_ab_${name.toLowerCase()}`;
  const databaseUrl = await ensureDatabase(base.databaseUrl, database, true);
  const prefix = `gwab${name.toLowerCase()}`;
  await deleteKeysByPrefix(base.redisUrl, prefix);
  const port = await freePort();
  const env = { ...process.env, ...benchEnv({ databaseUrl, redisUrl: base.redisUrl }, prefix), PORT: String(port), CHAT_INTERACTIVE_CONCURRENCY: '256', FLOOR_UPSTREAM: simUrl, AB_SIMULATOR_URL: simUrl, ...envList(process.env[`AB_${name}_ENV`]) };
  const flags = (v: string) => (process.env[v] ?? '').split(' ').filter(Boolean);
  const extra = flags(`AB_${name}_NODE_ARGS`);
  const webExtra = [...extra, ...flags(`AB_${name}_WEB_NODE_ARGS`)];
  const key = kind === 'gateway' ? await seedSide(env) : '';
  const procs =
    kind === 'floor'
      ? [node(dist, webExtra, 'scripts/bench/floor/web.js', [], env), node(dist, extra, 'scripts/bench/floor/worker.js', [], env)]
      : [node(dist, [...procfileNodeArgs('web'), ...webExtra], 'api/server.js', [], env), node(dist, [...procfileNodeArgs('chatworker'), ...extra], 'workers/main.js', ['chat'], env)];
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/healthz`);
  return { name, kind, dist, procs, url, key, database, totals: { requests: 0, completed: 0, seconds: 0, cpu: {}, commands: 0, bytes: 0, latencies: [], syscalls: procs.map(() => ({ reads: 0, writes: 0 })), switches: procs.map(() => ({ voluntary: 0, involuntary: 0 })) }, slices: [] };
}

const median = (v: number[]) => pct(v, 50);

/** Refuses a second run while one is alive (its pid in the lock file); returns the release. */
function lock(): () => void {
  const file = path.resolve('.data', 'ab.lock');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const other = Number(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : 0);
  if (other && other !== process.pid) {
    try {
      process.kill(other, 0);
      throw new Error(`another bench:ab run (pid ${other}) is running; wait for it or stop it`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // ESRCH: that run is gone
    }
  }
  fs.writeFileSync(file, String(process.pid));
  return () => fs.rmSync(file, { force: true });
}

async function main(): Promise<void> {
  const unlock = lock();
  const services = await ensureServices({ dataDir: '.data/ab', redisPort: 6383, pgPort: 5436, database: 'gateway_ab', recreate: true });
  const redis = new Redis(services.redisUrl);
  const simPort = await freePort();
  const simUrl = `http://127.0.0.1:${simPort}`;
  const sim = spawn(process.execPath, [path.join(here, 'scripts/simulator/server.js')], { env: { ...process.env, SIMULATOR_PORT: String(simPort) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const sides: Side[] = [];
  try {
    await waitHttp(`${simUrl}/_sim/requests`);
    await streamsInOneWriteIfAsked(simUrl);
    for (const name of ['A', 'B'] as const) sides.push(await startSide(name, services, simUrl));
    const messages = conversation(PROMPT_BYTES);
    const body = { model: 'sim-chat', messages, stream: MODE === 'stream' };
    const floorBody = { ...body, model: 'sim-chat-1' };
    // a warm-up of each side (JIT, connection pools, the heap's growth) that is not counted
    for (const s of sides) await runLoad(`${s.url}/v1/chat/completions`, { 'SERVICE-API-KEY': s.key }, s.kind === 'floor' ? floorBody : body, CONCURRENCY, WARMUP);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const s of order) {
        const parts = { pids: { web: s.procs[0].pid, worker: s.procs[1].pid }, redis, database: s.database };
        const [cpuBefore, countsBefore] = [await readCpu(parts), await readRedisCounts(redis)];
        const callsBefore = s.procs.map((p) => processSyscalls(p.pid));
        const switchesBefore = s.procs.map((p) => processSwitches(p.pid));
        const t = s.totals;
        const r = await runLoad(`${s.url}/v1/chat/completions`, { 'SERVICE-API-KEY': s.key }, s.kind === 'floor' ? floorBody : body, CONCURRENCY, SLICE, 0.2);
        const cpu = cpuPerRequestUs(cpuBefore, await readCpu(parts), 1); // µs of the whole slice
        s.procs.forEach((p, i) => {
          const now = processSyscalls(p.pid);
          t.syscalls[i].reads += now.reads - callsBefore[i].reads;
          t.syscalls[i].writes += now.writes - callsBefore[i].writes;
          const sw = processSwitches(p.pid);
          t.switches[i].voluntary += sw.voluntary - switchesBefore[i].voluntary;
          t.switches[i].involuntary += sw.involuntary - switchesBefore[i].involuntary;
        });
        const countsAfter = await readRedisCounts(redis);
        const { commands, bytes } = countsBefore && countsAfter ? totalsBetween(countsBefore, countsAfter) : { commands: 0, bytes: 0 };
        t.requests += r.samples.length;
        t.completed += r.completed;
        t.seconds += r.seconds;
        for (const [k, v] of Object.entries(cpu)) t.cpu[k] = (t.cpu[k] ?? 0) + v;
        t.commands += commands;
        t.bytes += bytes;
        for (const x of r.samples) t.latencies.push(MODE === 'stream' ? x.ttfb : x.total);
        const cpuUs = (cpu.web + cpu.worker + cpu.redis + cpu.postgres) / r.completed;
        s.slices.push({ rps: r.samples.length / r.seconds, cpuUs });
        if (r.errors) console.log(`side ${s.name} round ${round}: ${r.errors} errors`);
      }
      const [a, b] = sides.map((s) => s.slices[round]);
      console.log(`round ${round + 1}: A ${a.rps.toFixed(0)} req/s ${a.cpuUs.toFixed(0)} µs, B ${b.rps.toFixed(0)} req/s ${b.cpuUs.toFixed(0)} µs: B/A ${(b.rps / a.rps).toFixed(3)} req/s, ${(b.cpuUs / a.cpuUs).toFixed(3)} CPU`);
    }
    console.log(`\n${new Date().toISOString()}, ${MODE} c${CONCURRENCY}, ${ROUNDS} rounds of ${SLICE} s slices`);
    for (const s of sides) {
      const t = s.totals;
      const per = (k: string) => (t.cpu[k] ?? 0) / t.completed;
      const total = per('web') + per('worker') + per('redis') + per('postgres');
      const calls = (i: number) => `${(t.syscalls[i].reads / t.completed).toFixed(1)}/${(t.syscalls[i].writes / t.completed).toFixed(1)}`;
      const switches = (i: number) => `${(t.switches[i].voluntary / t.completed).toFixed(2)}/${(t.switches[i].involuntary / t.completed).toFixed(2)}`;
      console.log(
        `${s.name} (${s.kind}, ${path.relative(process.cwd(), s.dist) || '.'}${[process.env[`AB_${s.name}_ENV`], process.env[`AB_${s.name}_NODE_ARGS`], process.env[`AB_${s.name}_WEB_NODE_ARGS`] && `web ${process.env[`AB_${s.name}_WEB_NODE_ARGS`]}`].filter(Boolean).map((x) => `, ${x}`).join('')}): ${(t.requests / t.seconds).toFixed(0)} req/s, ` +
          `CPU ${total.toFixed(0)} µs/req (web ${per('web').toFixed(0)}, worker ${per('worker').toFixed(0)}, Redis ${per('redis').toFixed(0)}, Postgres ${per('postgres').toFixed(0)}), ` +
          `${MODE === 'stream' ? 'TTFB' : 'latency'} p50 ${median(t.latencies).toFixed(2)} ms p99 ${pct(t.latencies, 99).toFixed(2)} ms, ` +
          `Redis ${(t.commands / t.completed).toFixed(1)} commands and ${(t.bytes / t.completed).toFixed(0)} bytes written per request, ` +
          `system calls per request (reads/writes) web ${calls(0)}, worker ${calls(1)}, ` +
          `context switches per request (voluntary/involuntary) web ${switches(0)}, worker ${switches(1)}`,
      );
    }
    const [A, B] = sides;
    const rpsRatios = A.slices.map((a, i) => B.slices[i].rps / a.rps);
    const cpuRatios = A.slices.map((a, i) => B.slices[i].cpuUs / a.cpuUs);
    console.log(
      `B/A: req/s median of pairs ${median(rpsRatios).toFixed(3)} (B ahead in ${rpsRatios.filter((x) => x > 1).length} of ${ROUNDS}), ` +
        `CPU per request median of pairs ${median(cpuRatios).toFixed(3)} (B lower in ${cpuRatios.filter((x) => x < 1).length} of ${ROUNDS})`,
    );
  } finally {
    redis.disconnect();
    await Promise.all([...sides.flatMap((s) => s.procs), sim].map((p) => exited(p, 15_000)));
    await services.stop();
    unlock();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
