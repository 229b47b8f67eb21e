import { spawn, type ChildProcess } from 'child_process';
import fs from 'fs';
import http from 'http';
import path from 'path';
import { ensurePostgres, ensureDatabase } from '../services/postgres';
import { ensureRedis } from '../services/redis';
import { procfileNodeArgs } from './procfile';
import { freePort } from '../services/free-port';
import { benchEnv, setSimKnobs } from './processes';
import { seedChatOrg } from './seed-chat-org';

/**
 * `npm run bench:held`: holds HELD_STREAMS (default 2,000) streamed chat completions open at once on
 * one web pod (one chat worker process behind it, the simulator pacing each stream over
 * HELD_STREAM_SECONDS, default 20), samples the web process's RSS while all are open, and counts the
 * streams that end with `[DONE]`. Goal of issue 17: RSS under 250 MB, none dropped. Its own Redis on a
 * free port and its own database (HELD_DATABASE_NAME, default gateway_held).
 */
const N = Number(process.env.HELD_STREAMS ?? 2000);
const STREAM_S = Number(process.env.HELD_STREAM_SECONDS ?? 20);
const DB = process.env.HELD_DATABASE_NAME ?? 'gateway_held';
const dist = path.resolve(__dirname, '..', '..');

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function waitHttp(url: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await fetch(url).then((r) => r.status < 500, () => false)) return;
    if (Date.now() > end) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  delete process.env.REDIS_URL; // always a Redis of its own
  delete process.env.REDIS_CLUSTER_NODES;
  const redis = await ensureRedis(await freePort());
  const pg = await ensurePostgres(path.resolve('.data/bench/pg'), 5435);
  const databaseUrl = await ensureDatabase(pg.url, DB, true);
  const [simPort, webPort] = [await freePort(), await freePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  Object.assign(process.env, benchEnv({ databaseUrl, redisUrl: redis.url }, 'gwheld'));
  const { key } = await seedChatOrg(simUrl, 'held');

  const env = { ...process.env, METRICS_TOKEN: 'held-bench-metrics', PORT: String(webPort), SIMULATOR_PORT: String(simPort), CHAT_INTERACTIVE_CONCURRENCY: String(N + 100) };
  // each process with the Procfile's node flags (HELD_NODE_ARGS, when set, replaces them for all three)
  const extra = process.env.HELD_NODE_ARGS?.split(' ').filter(Boolean);
  const flags: Record<string, string[]> = { 'api/server.js': procfileNodeArgs('web'), 'workers/main.js': procfileNodeArgs('chatworker'), 'scripts/simulator/server.js': [] };
  const run = (script: string, args: string[] = []): ChildProcess => spawn(process.execPath, [...(extra ?? flags[script]), path.join(dist, script), ...args], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const procs = [run('scripts/simulator/server.js'), run('api/server.js'), run('workers/main.js', ['chat'])];
  const web = procs[1];
  try {
    await waitHttp(`${simUrl}/_sim/requests`);
    await waitHttp(`http://127.0.0.1:${webPort}/healthz`);
    const words = 40;
    await setSimKnobs(simUrl, 'sim-chat-1', { tokenDelayMs: Math.round((STREAM_S * 1000) / words), outputWords: words });
    const rssIdle = rssMb(web.pid!);
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const body = JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'hold this stream' }] });
    let firstBytes = 0;
    const t0 = Date.now();
    const one = () =>
      new Promise<boolean>((resolve) => {
        const req = http.request(`http://127.0.0.1:${webPort}/v1/chat/completions`, { method: 'POST', agent, headers: { 'SERVICE-API-KEY': key, 'content-type': 'application/json' } }, (res) => {
          let text = '';
          let first = true;
          res.on('data', (d) => {
            if (first) (first = false), firstBytes++;
            text += String(d);
          });
          res.on('end', () => resolve(res.statusCode === 200 && text.includes('data: [DONE]')));
          res.on('error', () => resolve(false));
        });
        req.on('error', () => resolve(false));
        req.end(body);
      });
    const all = Promise.all(Array.from({ length: N }, one));
    let rssPeak = rssIdle;
    let allOpenAt = 0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssMb(web.pid!));
      if (!allOpenAt && firstBytes >= N) allOpenAt = Date.now() - t0;
    }, 200);
    // HELD_HEAP=1: the web pod's V8 heap (used / total) and memory outside it, from its /metrics each second
    const heap: string[] = [];
    const heapSampler = process.env.HELD_HEAP === '1' ? setInterval(() => void readHeap(webPort).then((h) => heap.push(`${((Date.now() - t0) / 1000).toFixed(0)} s rss ${rssMb(web.pid!).toFixed(0)} ${h}`)), 1000) : undefined;
    const done = await all;
    clearInterval(sampler);
    clearInterval(heapSampler);
    heap.forEach((h) => console.log(h));
    const ok = done.filter(Boolean).length;
    console.log(`held streams: ${N} opened; all streaming after ${allOpenAt ? `${(allOpenAt / 1000).toFixed(1)} s` : 'never (not all got a first byte at once)'}; completed with [DONE]: ${ok}; dropped: ${N - ok}`);
    console.log(`web pod RSS: ${rssIdle.toFixed(0)} MB idle, ${rssPeak.toFixed(0)} MB peak (goal: under 250 MB, none dropped: ${rssPeak < 250 && ok === N ? 'met' : 'NOT met'})`);
    agent.destroy();
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    await Promise.all(procs.map((p) => new Promise((res) => (p.exitCode !== null ? res(null) : p.once('exit', res)))));
    await redis.stop();
    await pg.stop();
  }
}

/** The web pod's heap used / total and external memory (MB), from prom-client's default metrics. */
async function readHeap(port: number): Promise<string> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: 'Bearer held-bench-metrics' } }).then((r) => r.text(), () => '');
  const mb = (name: string) => (Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / 1048576).toFixed(0);
  return `heap used ${mb('nodejs_heap_size_used_bytes')} total ${mb('nodejs_heap_size_total_bytes')} external ${mb('nodejs_external_memory_bytes')}`;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
