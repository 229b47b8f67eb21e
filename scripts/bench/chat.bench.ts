import { spawn, type ChildProcess } from 'child_process';
import net from 'net';
import path from 'path';
import { ensureServices } from '../services';
import { deleteKeysByPrefix } from '../services/redis';
import { runLoad, pct, type LoadResult } from './load';

/**
 * `npm run bench`: chat completions (JSON and streamed), embeddings and rerank, at concurrency 1,
 * 16 and 64, directly against the upstream simulator and through the gateway (one web process, one
 * worker process running the chat and embeddings pools), in one run on this machine. Prints req/s,
 * p50, p99, the latency the gateway adds and the throughput ratio. BENCH_SECONDS sets the measuring time per cell (default 3).
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number);
/** BENCH_MODES narrows the run, e.g. `json,stream` (default: json,stream,embeddings,rerank). */
const MODES = new Set((process.env.BENCH_MODES ?? 'json,stream,embeddings,rerank').split(','));
const dist = path.resolve(__dirname, '..', '..');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** BENCH_NODE_ARGS passes flags to the gateway's processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

function child(script: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...NODE_ARGS, path.join(dist, script), ...args], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function waitHttp(url: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  const services = await ensureServices({ dataDir: '.data/bench', redisPort: 6382, pgPort: 5435, database: 'gateway_bench', recreate: true });
  const [simPort, webPort] = [await freePort(), await freePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  Object.assign(process.env, {
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_PREFIX: 'gwbench',
    SECRET_KEY: process.env.SECRET_KEY ?? 'bench-secret-key-bench-secret-key-0123456789',
    LOG_LEVEL: 'warn',
  });
  const env = { ...process.env, CHAT_INTERACTIVE_CONCURRENCY: '256', PORT: String(webPort), SIMULATOR_PORT: String(simPort) };

  // Imported after the environment is set: configuration is read on first use.
  const { db, closeDb } = await import('../../shared/db/sequelize.js');
  const { migrate } = await import('../../shared/db/migrate.js');
  const { seed } = await import('../../shared/db/seed.js');
  const { createRedis } = await import('../../shared/redis/connection.js');
  const { createApiKey, createOrg } = await import('../../shared/tenancy/ops.js');
  const { Organization } = await import('../../shared/db/models/index.js');

  await migrate(db());
  const redis = createRedis('command');
  await deleteKeysByPrefix(services.redisUrl, 'gwbench');
  await seed(redis, simUrl);
  const org = await createOrg(redis, { name: `bench-${Date.now()}`, plan: 'pro' });
  await Organization.update({ laneOverrides: { 'chat:interactive': 100_000, 'embeddings:default': 100_000 } }, { where: { id: org.id } });
  const { key } = await createApiKey(redis, { orgId: org.id });
  redis.disconnect();
  await closeDb();

  const procs = [child('scripts/simulator/server.js', [], env), child('api/server.js', [], env), child('workers/main.js', ['chat,embeddings'], env)];
  try {
    await waitHttp(`${simUrl}/_sim/requests`);
    await waitHttp(`http://127.0.0.1:${webPort}/healthz`);
    await new Promise((r) => setTimeout(r, 500));

    const messages = [{ role: 'user', content: 'benchmark prompt with a few words' }];
    const rows: string[][] = [];
    const summary: string[] = [];
    for (const stream of [false, true].filter((s) => MODES.has(s ? 'stream' : 'json'))) {
      for (const c of CONCURRENCY) {
        const direct = await runLoad(`${simUrl}/v1/chat/completions`, {}, { model: 'sim-chat-1', messages, stream }, c, SECONDS);
        const gw = await runLoad(`http://127.0.0.1:${webPort}/v1/chat/completions`, { 'SERVICE-API-KEY': key }, { model: 'sim-chat', messages, stream }, c, SECONDS);
        const m = (r: LoadResult) => {
          const lat = r.samples.map((s) => (stream ? s.ttfb : s.total));
          return { rps: r.samples.length / r.seconds, p50: pct(lat, 50), p99: pct(lat, 99), errors: r.errors };
        };
        const d = m(direct);
        const g = m(gw);
        const mode = stream ? 'stream (TTFB)' : 'json';
        rows.push([mode, String(c), d.rps.toFixed(0), g.rps.toFixed(0), (g.rps / d.rps).toFixed(2), d.p50.toFixed(2), g.p50.toFixed(2), (g.p50 - d.p50).toFixed(2), d.p99.toFixed(2), g.p99.toFixed(2), String(d.errors + g.errors)]);
        summary.push(`${mode} c=${c}: gateway/direct throughput ${(g.rps / d.rps).toFixed(2)}, added p50 ${(g.p50 - d.p50).toFixed(2)} ms`);
      }
    }
    // Embeddings and rerank (docs/embeddings.md): the simulator's own paths directly, the gateway's through it.
    const inputs = Array.from({ length: 8 }, (_, i) => `benchmark sentence number ${i} with a few words`);
    const tasks = [
      ['embeddings', '/v1/embeddings', { model: 'sim-embed-1', input: inputs }, '/v1/embeddings', { model: 'sim-embed', input: inputs }],
      ['rerank', '/v2/rerank', { model: 'sim-rerank-1', query: 'sentence 3', documents: inputs }, '/v1/rerank', { model: 'sim-rerank', query: 'sentence 3', documents: inputs }],
    ] as const;
    for (const [mode, directPath, directBody, gwPath, gwBody] of tasks.filter((t) => MODES.has(t[0]))) {
      for (const c of CONCURRENCY) {
        const direct = await runLoad(`${simUrl}${directPath}`, {}, directBody, c, SECONDS);
        const gw = await runLoad(`http://127.0.0.1:${webPort}${gwPath}`, { 'SERVICE-API-KEY': key }, gwBody, c, SECONDS);
        const m = (r: LoadResult) => {
          const lat = r.samples.map((s) => s.total);
          return { rps: r.samples.length / r.seconds, p50: pct(lat, 50), p99: pct(lat, 99), errors: r.errors };
        };
        const [d, g] = [m(direct), m(gw)];
        rows.push([mode, String(c), d.rps.toFixed(0), g.rps.toFixed(0), (g.rps / d.rps).toFixed(2), d.p50.toFixed(2), g.p50.toFixed(2), (g.p50 - d.p50).toFixed(2), d.p99.toFixed(2), g.p99.toFixed(2), String(d.errors + g.errors)]);
        summary.push(`${mode} c=${c}: gateway/direct throughput ${(g.rps / d.rps).toFixed(2)}, added p50 ${(g.p50 - d.p50).toFixed(2)} ms`);
      }
    }
    const head = ['mode', 'conc', 'direct req/s', 'gateway req/s', 'ratio', 'direct p50 ms', 'gateway p50 ms', 'added p50 ms', 'direct p99 ms', 'gateway p99 ms', 'errors'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (r: string[]) => `| ${r.map((v, i) => v.padStart(widths[i])).join(' | ')} |`;
    console.log(line(head));
    console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
    rows.forEach((r) => console.log(line(r)));
    console.log('');
    summary.forEach((s) => console.log(s));
  } finally {
    procs.forEach((p) => p.kill('SIGTERM'));
    await new Promise((r) => setTimeout(r, 500));
    await services.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
