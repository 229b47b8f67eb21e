import { spawn, type ChildProcess } from 'child_process';
import fs from 'fs';
import path from 'path';
import { ensureServices } from '../services';
import { deleteKeysByPrefix } from '../services/redis';
import { freePort } from '../services/free-port';
import { runLoad, pct, type LoadResult } from './load';
import { readCpu, cpuPerRequestUs } from './cpu';
import { benchEnv, exited, setSimKnobs, streamsInOneWriteIfAsked, waitHttp } from './processes';
import { readNodes, spreadRows } from './cluster-spread';
import { readRedisCounts, perRequest, detail, REDIS_COUNT_HEAD } from './redis-counts';
import { recordScripts, scriptLines } from './redis-scripts';
import type { Redis } from 'ioredis';
import { floodCell, floodRows, FLOOD_HEAD } from './flood';
import { startLocalCluster, type LocalCluster } from '../cluster/redis-cluster';
import { startOtlpSink, tracingEnv } from './otlp-sink';
import { conversation } from './conversation';
import { GC_HEAD, gcRow, readGcLog } from './gc-summary';

/**
 * `npm run bench`: chat completions (JSON and streamed), embeddings, rerank and web search (the MCP
 * `web_search` tool call through the gateway vs the provider's search API on the simulator), at concurrency 1,
 * 16 and 64, directly against the upstream simulator and through the gateway (one web process, one
 * worker process running the chat and embeddings pools), in one run on this machine. Prints req/s,
 * p50, p99, the latency the gateway adds and the throughput ratio. BENCH_SECONDS sets the measuring time per cell (default 3).
 * BENCH_CLUSTER=1 runs the gateway on a three-master Redis Cluster of its own (scripts/cluster) and
 * prints each master's share of the commands (INFO commandstats) and of the Redis CPU, and the commands
 * per request (QUEUE_SHARDS_CHAT sets the chat queues' shards, default 3 on a cluster); the floor
 * (a bare BullMQ stack on single-node Redis) is left out then.
 */
const CLUSTER = process.env.BENCH_CLUSTER === '1';
/** BENCH_DATABASE_NAME: the bench's own database, dropped and created (default gateway_bench). */
const BENCH_DB = process.env.BENCH_DATABASE_NAME ?? 'gateway_bench';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number);
/** BENCH_MODES narrows the run, e.g. `json,stream` (default: json,stream,embeddings,rerank,search,failover,flood,flood-cpu). */
const MODES = new Set((process.env.BENCH_MODES ?? 'json,stream,embeddings,rerank,search,failover,flood,flood-cpu').split(','));
/** The chat worker's slots (CHAT_INTERACTIVE_CONCURRENCY of the bench's worker process; BENCH_WORKER_SLOTS, default 256). */
const WORKER_SLOTS = Number(process.env.BENCH_WORKER_SLOTS ?? 256);
/** The flood cell's in-flight requests from the flooding organization (default four times the workers' slots). */
const FLOOD_IN_FLIGHT = Number(process.env.BENCH_FLOOD_IN_FLIGHT ?? 4 * WORKER_SLOTS);
/**
 * The `flood` cell's upstream time of each of the flooding org's requests (BENCH_FLOOD_UPSTREAM_MS).
 * Issue 29 §4's probe kept 4x the worker's 64 slots busy with 200 ms requests: the flood is bound by
 * the slots (320 req/s), not by the machine. The same bound with this bench's slots is 200 ms x
 * slots / 64 (800 ms with 256). `flood-cpu` is the same cell with instant upstream answers: the flood
 * then takes every core the machine has (a stress case beyond the issue's).
 */
const FLOOD_UPSTREAM_MS = Number(process.env.BENCH_FLOOD_UPSTREAM_MS ?? Math.round((200 * WORKER_SLOTS) / 64));
/**
 * How much each of those answers' time varies, ± this fraction (BENCH_FLOOD_UPSTREAM_JITTER, default 0.5):
 * a model's answers take more or less time with their length; with one fixed time, the flood's jobs,
 * started together, would finish together in waves that no real upstream makes.
 */
const FLOOD_UPSTREAM_JITTER = Number(process.env.BENCH_FLOOD_UPSTREAM_JITTER ?? 0.5);
/**
 * The flood cell's quiet organization's concurrency (BENCH_QUIET_CONCURRENCY, default 1, the issue's
 * probe): a quiet organization with a few requests at once is the common case beside a flood.
 */
const QUIET_CONCURRENCY = Math.max(1, Number(process.env.BENCH_QUIET_CONCURRENCY ?? 1));
const dist = path.resolve(__dirname, '..', '..');
/**
 * BENCH_TRACING: `off` (default) or a sampling ratio (`1` = every request, `0.01`): the gateway's
 * processes then trace (OpenTelemetry, OTLP/HTTP protobuf to a sink in this process that discards).
 */
const TRACING = process.env.BENCH_TRACING ?? 'off';

/** BENCH_NODE_ARGS passes flags to the gateway's processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * BENCH_PROFILE_DIR: each gateway and floor process writes a CPU profile there, named by its role
 * (`web`, `worker`, `floor-web`, `floor-worker`), and the bench writes `requests.json` (requests each
 * pair of processes served, warm-up included): `npm run bench:profile` reads them (profile-attribution.ts).
 * BENCH_PROFILE_INTERVAL_US: the profiler's sampling interval (V8's default 1000 µs) for finer profiles.
 */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;

/**
 * BENCH_GC_DIR: each gateway and floor process also runs with `--trace-gc-nvp`, its log in that
 * directory named by its role (gc-log.ts), and the bench ends with a table of what the collector did
 * per process (gc-summary.ts): over the process's life, warm-up included, per request it served.
 */
const GC_DIR = process.env.BENCH_GC_DIR ? path.resolve(process.env.BENCH_GC_DIR) : undefined;

function child(script: string, args: string[], env: NodeJS.ProcessEnv, role?: string): ChildProcess {
  const interval = process.env.BENCH_PROFILE_INTERVAL_US ? [`--cpu-prof-interval=${process.env.BENCH_PROFILE_INTERVAL_US}`] : [];
  const profile = PROFILE_DIR && role ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${role}.cpuprofile`, ...interval] : [];
  const gc = GC_DIR && role ? ['--trace-gc-nvp', '--require', path.join(__dirname, 'gc-log.js')] : [];
  const childEnv = GC_DIR && role ? { ...env, BENCH_GC_LOG: path.join(GC_DIR, `${role}.log`) } : env;
  return spawn(process.execPath, [...NODE_ARGS, ...profile, ...gc, path.join(dist, script), ...args], { env: childEnv, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Prints a markdown table with right-aligned columns. */
function table(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((v, i) => v.padStart(widths[i])).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  rows.forEach((r) => console.log(line(r)));
}

async function main(): Promise<void> {
  let cluster: LocalCluster | undefined;
  if (CLUSTER) {
    cluster = await startLocalCluster(3);
    process.env.REDIS_CLUSTER_NODES = cluster.nodes;
    process.env.REDIS_URL = `redis://127.0.0.1:${cluster.ports[0]}`;
  }
  if (GC_DIR) {
    fs.rmSync(GC_DIR, { recursive: true, force: true });
    fs.mkdirSync(GC_DIR, { recursive: true });
  }
  const services = await ensureServices({ dataDir: '.data/bench', redisPort: 6382, pgPort: 5435, database: BENCH_DB, recreate: true });
  // requests each pair of processes served: the cluster's commands per request, BENCH_PROFILE_DIR, BENCH_GC_DIR
  const served = { gateway: 0, floor: 0 };
  const [simPort, webPort, floorPort] = [await freePort(), await freePort(), await freePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  Object.assign(process.env, benchEnv(services, 'gwbench'));
  const sink = TRACING === 'off' ? undefined : await startOtlpSink();
  const env = { ...process.env, CHAT_INTERACTIVE_CONCURRENCY: String(WORKER_SLOTS), PORT: String(webPort), SIMULATOR_PORT: String(simPort), ...(sink ? tracingEnv(sink.url, TRACING) : {}) };

  // Imported after the environment is set: configuration is read on first use.
  const { db, closeDb } = await import('../../shared/db/sequelize.js');
  const { migrate } = await import('../../shared/db/migrate.js');
  const { seed } = await import('../../shared/db/seed.js');
  const { createRedis } = await import('../../shared/redis/connection.js');
  const { createApiKey, createOrg } = await import('../../shared/tenancy/ops.js');
  const { Organization, SearchSetting } = await import('../../shared/db/models/index.js');

  await migrate(db());
  const redis = createRedis('command');
  if (!cluster) await deleteKeysByPrefix(services.redisUrl, 'gwbench');
  await seed(redis, simUrl);
  const org = await createOrg(redis, { name: `bench-${Date.now()}`, plan: 'pro' });
  await Organization.update(
    { laneOverrides: { 'chat:interactive': 100_000, 'embeddings:default': 100_000, 'search:default': 100_000 }, entitlements: { web_search_per_minute: 1_000_000_000 } },
    { where: { id: org.id } },
  );
  await SearchSetting.create({ orgId: org.id, monthlyAllowance: 1_000_000_000 });
  const { key } = await createApiKey(redis, { orgId: org.id });
  // The flood cell's quiet organization: its plan's own lanes, one request at a time.
  const quietOrg = await createOrg(redis, { name: `bench-quiet-${Date.now()}`, plan: 'pro' });
  const { key: quietKey } = await createApiKey(redis, { orgId: quietOrg.id });
  // Model pools (docs/routing.md): two deployments balanced, and a pool of one whose every other attempt fails.
  const { upsertModel } = await import('../../shared/catalog/catalog-ops.js');
  const { bumpEpoch } = await import('../../shared/cache/epoch.js');
  const { bullQueuesOf } = await import('../../shared/queues/shards.js');
  const { keys } = await import('../../shared/redis/keys.js');
  const pooled = { capabilities: { chat: true }, prices: { input_token: 0.5, output_token: 1.5 } };
  await upsertModel({ id: 'bench-pool-2', ...pooled, deployments: [{ name: 'a', provider: 'simulator', upstream: 'sim-chat-1' }, { name: 'b', provider: 'simulator', upstream: 'sim-chat-2' }] });
  await upsertModel({ id: 'bench-retry', ...pooled, deployments: [{ name: 'flaky', provider: 'simulator', upstream: 'bench-flaky' }] });
  // The flood cell's flooding org calls this one: its answers are late by the simulator's knob, the quiet org's are not.
  await upsertModel({ id: 'bench-slow', ...pooled, deployments: [{ name: 'slow', provider: 'simulator', upstream: 'bench-slow' }] });
  await bumpEpoch(redis);
  redis.disconnect();
  await closeDb();

  const procs = [child('scripts/simulator/server.js', [], env), child('api/server.js', [], env, 'web'), child('workers/main.js', ['chat,embeddings,search'], env, 'worker')];
  // The floor (scripts/bench/floor): the bare stack, measured beside the gateway on JSON and streamed chat.
  const floorEnv = { ...env, PORT: String(floorPort), FLOOR_UPSTREAM: simUrl };
  const withFloor = (MODES.has('json') || MODES.has('stream')) && !cluster;
  if (withFloor) procs.push(child('scripts/bench/floor/web.js', [], floorEnv, 'floor-web'), child('scripts/bench/floor/worker.js', [], floorEnv, 'floor-worker'));
  try {
    await waitHttp(`${simUrl}/_sim/requests`);
    await waitHttp(`http://127.0.0.1:${webPort}/healthz`);
    if (withFloor) await waitHttp(`http://127.0.0.1:${floorPort}/healthz`);
    await new Promise((r) => setTimeout(r, 500));

    const cpuRedis = createRedis('command', services.redisUrl);
    const nodesBefore = cluster ? await readNodes(cpuRedis as import('ioredis').Cluster) : [];
    const gatewayParts = { pids: { web: procs[1].pid, worker: procs[2].pid, simulator: procs[0].pid }, redis: cpuRedis, database: BENCH_DB };
    const floorParts = { ...gatewayParts, pids: { web: procs[3]?.pid, worker: procs[4]?.pid, simulator: procs[0].pid } };
    const rows: string[][] = [];
    const cpuRows: string[][] = [];
    const countRows: string[][] = [];
    const summary: string[] = [];
    /** One cell: the same load directly and through the gateway; CPU is read around the gateway run. */
    const cell = async (mode: string, c: number, direct: [string, object], gateway: [string, object], ttfb: boolean, floor = false, headers: { direct?: Record<string, string>; gateway?: Record<string, string> } = {}) => {
      const d = await runLoad(`${simUrl}${direct[0]}`, headers.direct ?? {}, direct[1], c, SECONDS);
      const cpuParts = floor ? floorParts : gatewayParts;
      const before = await readCpu(cpuParts);
      const countsBefore = await readRedisCounts(cpuRedis);
      // BENCH_REDIS_SCRIPTS=1: each Lua script's time (redis-scripts.ts); it costs Redis time, so CPU figures read high then
      const scripts = process.env.BENCH_REDIS_SCRIPTS === '1' && !cluster ? await recordScripts(cpuRedis as Redis) : undefined;
      const g = await runLoad(`http://127.0.0.1:${floor ? floorPort : webPort}${gateway[0]}`, { 'SERVICE-API-KEY': key, ...(headers.gateway ?? {}) }, gateway[1], c, SECONDS);
      const cpu = cpuPerRequestUs(before, await readCpu(cpuParts), g.completed);
      served[floor ? 'floor' : 'gateway'] += g.completed;
      const countsAfter = await readRedisCounts(cpuRedis);
      countRows.push([mode, String(c), ...perRequest(countsBefore, countsAfter, g.completed)]);
      if (scripts) console.log([`${mode} c=${c} Redis time in Lua scripts (slow log):`, ...scriptLines(await scripts(), g.completed)].join('\n'));
      if (process.env.BENCH_REDIS_DETAIL === '1') console.log(`${mode} c=${c} Redis calls per request: ${detail(countsBefore, countsAfter, g.completed)}`);
      const m = (r: LoadResult) => {
        const lat = r.samples.map((s) => (ttfb ? s.ttfb : s.total));
        return { rps: r.samples.length / r.seconds, p50: pct(lat, 50), p99: pct(lat, 99), errors: r.errors };
      };
      const [dm, gm] = [m(d), m(g)];
      rows.push([mode, String(c), dm.rps.toFixed(0), gm.rps.toFixed(0), (gm.rps / dm.rps).toFixed(2), dm.p50.toFixed(2), gm.p50.toFixed(2), (gm.p50 - dm.p50).toFixed(2), dm.p99.toFixed(2), gm.p99.toFixed(2), String(dm.errors + gm.errors)]);
      const gatewayUs = cpu.web + cpu.worker + cpu.redis + cpu.postgres;
      cpuRows.push([mode, String(c), ...[cpu.web, cpu.worker, cpu.redis, cpu.postgres, gatewayUs, cpu.simulator].map((v) => v.toFixed(0))]);
      summary.push(`${mode} c=${c}: gateway/direct throughput ${(gm.rps / dm.rps).toFixed(2)}, added p50 ${(gm.p50 - dm.p50).toFixed(2)} ms, gateway CPU ${gatewayUs.toFixed(0)} µs/request`);
    };

    // BENCH_PROMPT_BYTES: a conversation of about that many bytes instead of a short prompt (conversation.ts)
    const messages = conversation(Number(process.env.BENCH_PROMPT_BYTES ?? 0));
    await streamsInOneWriteIfAsked(simUrl); // BENCH_STREAM_ONE_WRITE (processes.ts)
    for (const stream of [false, true].filter((s) => MODES.has(s ? 'stream' : 'json'))) {
      for (const c of CONCURRENCY) {
        await cell(stream ? 'stream (TTFB)' : 'json', c, ['/v1/chat/completions', { model: 'sim-chat-1', messages, stream }], ['/v1/chat/completions', { model: 'sim-chat', messages, stream }], stream);
        if (!cluster) await cell(stream ? 'stream floor (TTFB)' : 'json floor', c, ['/v1/chat/completions', { model: 'sim-chat-1', messages, stream }], ['/v1/chat/completions', { model: 'sim-chat', messages, stream }], stream, true);
      }
    }
    // Fail-over (docs/routing.md): two deployments of one model, and one retry in (about) every request:
    // 'bench-flaky' answers 503 (Retry-After: 0) to every other attempt, so a failed attempt is retried at once.
    if (MODES.has('failover')) {
      await setSimKnobs(simUrl, 'bench-flaky', { status: 503, statusEvery: 2, retryAfter: 0 });
      for (const c of CONCURRENCY) {
        await cell('pool of 2', c, ['/v1/chat/completions', { model: 'sim-chat-1', messages }], ['/v1/chat/completions', { model: 'bench-pool-2', messages }], false);
        await cell('one retry', c, ['/v1/chat/completions', { model: 'sim-chat-1', messages }], ['/v1/chat/completions', { model: 'bench-retry', messages }], false);
      }
    }
    // Embeddings and rerank (docs/embeddings.md): the simulator's own paths directly, the gateway's through it.
    const inputs = Array.from({ length: 8 }, (_, i) => `benchmark sentence number ${i} with a few words`);
    const tasks = [
      ['embeddings', '/v1/embeddings', { model: 'sim-embed-1', input: inputs }, '/v1/embeddings', { model: 'sim-embed', input: inputs }],
      ['rerank', '/v2/rerank', { model: 'sim-rerank-1', query: 'sentence 3', documents: inputs }, '/v1/rerank', { model: 'sim-rerank', query: 'sentence 3', documents: inputs }],
    ] as const;
    for (const [mode, directPath, directBody, gwPath, gwBody] of tasks.filter((t) => MODES.has(t[0]))) {
      for (const c of CONCURRENCY) await cell(mode, c, [directPath, directBody], [gwPath, gwBody], false);
    }
    // Web search (docs/search.md): the MCP `web_search` tool call (stateless Streamable HTTP, JSON
    // answers) through the gateway vs Tavily's POST /search on the simulator directly.
    if (MODES.has('search')) {
      const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'benchmark query', provider: 'tavily', count: 5 } } };
      const headers = { direct: { authorization: 'Bearer sim-tavily-platform-key' }, gateway: { accept: 'application/json, text/event-stream' } };
      for (const c of CONCURRENCY) await cell('search (MCP)', c, ['/tavily/search', { query: 'benchmark query', max_results: 5 }], ['/mcp', call], false, false, headers);
    }
    // Fair share under a flood (issue 29 part 4): one org keeps FLOOD_IN_FLIGHT requests in flight, a quiet org sends one at a time:
    // `flood` with the flood's answers FLOOD_UPSTREAM_MS late (bound by the worker's slots, the issue's probe), `flood-cpu` instant.
    const floodTables: Array<{ mode: string; title: string; rows: string[][] }> = [];
    for (const [mode, upstreamMs] of [['flood', FLOOD_UPSTREAM_MS], ['flood-cpu', 0]] as const) {
      if (!MODES.has(mode) || cluster) continue;
      await setSimKnobs(simUrl, 'bench-slow', upstreamMs ? { delayMs: upstreamMs, delayJitter: FLOOD_UPSTREAM_JITTER } : {});
      const r = await floodCell({
        gatewayUrl: `http://127.0.0.1:${webPort}`, floodKey: key, floodOrgId: org.id, quietKey, quietOrgId: quietOrg.id,
        body: { model: 'sim-chat', messages }, floodBody: { model: 'bench-slow', messages },
        inFlight: FLOOD_IN_FLIGHT, quietConcurrency: QUIET_CONCURRENCY, seconds: SECONDS, redis: cpuRedis, queueKeys: bullQueuesOf('chat-interactive').map((name) => `${keys.bullPrefix(name)}:${name}`),
        direct: { url: `${simUrl}/v1/chat/completions`, body: { model: 'sim-chat-1', messages } },
      });
      floodTables.push({ mode, title: `${mode}: the flood's answers ${upstreamMs ? `${upstreamMs} ms late (bound by the worker's ${WORKER_SLOTS} slots)` : 'instant (bound by the machine)'}`, rows: floodRows(r, FLOOD_IN_FLIGHT) });
    }
    const nodesAfter = cluster ? await readNodes(cpuRedis as import('ioredis').Cluster) : [];
    cpuRedis.disconnect();
    table(['mode', 'conc', 'direct req/s', 'gateway req/s', 'ratio', 'direct p50 ms', 'gateway p50 ms', 'added p50 ms', 'direct p99 ms', 'gateway p99 ms', 'errors'], rows);
    console.log('');
    table(['mode', 'conc', 'web µs/req', 'worker µs/req', 'redis µs/req', 'postgres µs/req', 'gateway µs/req', 'simulator µs/req'], cpuRows);
    console.log('');
    if (!cluster) {
      console.log('Redis per request (INFO commandstats calls, commands inside scripts included; bytes clients wrote):');
      table(['mode', 'conc', ...REDIS_COUNT_HEAD], countRows);
      console.log('');
    }
    for (const { mode, title, rows: floodTable } of floodTables) {
      console.log(`Fair share under a flood (JSON chat), ${title}: the quiet org at concurrency ${QUIET_CONCURRENCY}, alone and while another org keeps`);
      console.log(`${FLOOD_IN_FLIGHT} requests in flight; its jobs' slot wait (added → a worker took it) and worker run (taken → finished);`);
      console.log('rest = client time − slot wait − worker run at the same percentile (the pod, Redis hops, the network);');
      console.log('pod in = request sent → job added, pod out = job completed → reply read (Redis clock vs the client\'s, one machine):');
      table(FLOOD_HEAD, floodTable);
      const [alone, flooded] = [floodTable[0][3], floodTable[1][3]].map(Number);
      console.log(`quiet org p99 under the flood: ${(flooded / alone).toFixed(2)}x alone${mode === 'flood' ? ' (goal: at most 2x)' : ''}`); // the goal is the issue's case's
      const direct = floodTable.find((row) => row[0].startsWith('upstream direct, alone'));
      const directFlooded = floodTable.find((row) => row[0].startsWith('upstream direct, under'));
      if (direct && directFlooded) console.log(`the upstream's own p99 under the flood, no gateway: ${(Number(directFlooded[3]) / Number(direct[3])).toFixed(2)}x alone (the machine's share of the stretch)`);
      console.log('');
    }
    summary.forEach((s) => console.log(s));
    if (PROFILE_DIR) fs.writeFileSync(path.join(PROFILE_DIR, 'requests.json'), JSON.stringify(served));
    console.log(`tracing: ${sink ? `on, sampled ${TRACING} (${sink.stats.posts} exports so far, ${(sink.stats.bytes / 1e6).toFixed(1)} MB)` : 'off'}`);
    if (cluster) {
      const spread = spreadRows(nodesBefore, nodesAfter);
      console.log('');
      table(['cluster master', 'commands', 'share of commands', 'Redis CPU ms', 'share of CPU'], spread.rows);
      console.log(`largest share of commands on one master: ${(100 * spread.maxShare).toFixed(1)} % (goal: at most 50 %)`);
      const commands = spread.rows.reduce((s, r) => s + Number(r[1]), 0);
      const cpuMs = spread.rows.reduce((s, r) => s + Number(r[3]), 0);
      console.log(`${served.gateway} gateway requests, QUEUE_SHARDS_CHAT ${process.env.QUEUE_SHARDS_CHAT ?? '3 (the cluster default)'}: ${(commands / served.gateway).toFixed(1)} commands and ${((1000 * cpuMs) / served.gateway).toFixed(0)} µs of Redis CPU per request, ${((1000 * cpuMs) / commands).toFixed(1)} µs per command`);
    }
  } finally {
    // Let the processes drain (the usage outbox among them) before their Redis and Postgres go away.
    await Promise.all(procs.map((p) => exited(p, 15_000)));
    if (GC_DIR) {
      console.log('');
      const roles: Array<[string, number]> = [['web', served.gateway], ['worker', served.gateway], ['floor-web', served.floor], ['floor-worker', served.floor]];
      table(GC_HEAD, roles.filter(([, n]) => n > 0).map(([role, n]) => gcRow(role, readGcLog(path.join(GC_DIR, `${role}.log`)), n)));
    }
    await services.stop();
    await cluster?.stop();
    await sink?.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
