import { spawn, type ChildProcess } from 'child_process';
import path from 'path';
import { ensureServices } from '../services';
import { deleteKeysByPrefix } from '../services/redis';
import { freePort } from '../services/free-port';
import { runLoad, pct } from './load';
import { benchEnv, exited, setSimKnobs, waitHttp } from './processes';

/**
 * `npm run bench:batches` (a measurement, not a test): an interactive org's chat latency alone, then
 * while another org's large batch (BENCH_BATCH_LINES, default 10,000 lines) runs on the background lane.
 * One web process, one chat worker process, one batchworker, the simulator (with BENCH_UPSTREAM_MS of
 * upstream latency, default 50), on the machine's Redis/Postgres when REDIS_URL/DATABASE_URL are set
 * (database BENCH_DATABASE_NAME, default gateway_bench_batches; Redis prefix gwbbench). Interactive load:
 * BENCH_CONCURRENCY closed-loop clients (default 4) for BENCH_SECONDS (default 10) per phase.
 */
const LINES = Number(process.env.BENCH_BATCH_LINES ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const UPSTREAM_MS = Number(process.env.BENCH_UPSTREAM_MS ?? 50);
const BENCH_DB = process.env.BENCH_DATABASE_NAME ?? 'gateway_bench_batches';
const dist = path.resolve(__dirname, '..', '..');

const child = (script: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess =>
  spawn(process.execPath, [path.join(dist, script), ...args], { env, stdio: ['ignore', 'ignore', 'inherit'] });

async function main(): Promise<void> {
  const services = await ensureServices({ dataDir: '.data/bench-batches', redisPort: 6384, pgPort: 5437, database: BENCH_DB, recreate: true });
  const [simPort, webPort] = [await freePort(), await freePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  Object.assign(process.env, {
    ...benchEnv(services, 'gwbbench'),
    IMAGE_STORAGE_DIR: path.resolve('.data/bench-batches/files'),
    BATCH_MAX_LINES: String(Math.max(LINES, 50_000)),
  });
  const env = { ...process.env, PORT: String(webPort), SIMULATOR_PORT: String(simPort) };
  const { db, closeDb } = await import('../../shared/db/sequelize.js');
  const { migrate } = await import('../../shared/db/migrate.js');
  const { seed } = await import('../../shared/db/seed.js');
  const { createRedis } = await import('../../shared/redis/connection.js');
  const { createApiKey, createOrg } = await import('../../shared/tenancy/ops.js');
  await migrate(db());
  const redis = createRedis('command');
  await deleteKeysByPrefix(services.redisUrl, 'gwbbench');
  await seed(redis, simUrl);
  const interactive = await createOrg(redis, { name: `bench-interactive-${Date.now()}`, plan: 'pro' });
  const batcher = await createOrg(redis, { name: `bench-batch-${Date.now()}`, plan: 'pro' });
  const iKey = (await createApiKey(redis, { orgId: interactive.id })).key;
  const bKey = (await createApiKey(redis, { orgId: batcher.id })).key;
  redis.disconnect();
  await closeDb();

  const procs = [child('scripts/simulator/server.js', [], env), child('api/server.js', [], env), child('workers/main.js', ['chat'], env), child('workers/batch/main.js', [], env)];
  try {
    await waitHttp(`${simUrl}/_sim/requests`);
    await waitHttp(`http://127.0.0.1:${webPort}/healthz`);
    await setSimKnobs(simUrl, 'sim-chat-1', { delayMs: UPSTREAM_MS });
    const gw = `http://127.0.0.1:${webPort}`;
    const body = { model: 'sim-chat', messages: [{ role: 'user', content: 'benchmark prompt with a few words' }] };
    const measure = async () => {
      const r = await runLoad(`${gw}/v1/chat/completions`, { 'SERVICE-API-KEY': iKey }, body, CONCURRENCY, SECONDS);
      const lat = r.samples.map((s) => s.total);
      return { rps: r.samples.length / r.seconds, p50: pct(lat, 50), p99: pct(lat, 99), errors: r.errors };
    };
    const alone = await measure();

    const lines = Array.from({ length: LINES }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: `batch line ${i}` }] } })).join('\n');
    const form = new FormData();
    form.set('purpose', 'batch');
    form.set('file', new Blob([lines]), 'bench.jsonl');
    const file = (await (await fetch(`${gw}/v1/files`, { method: 'POST', headers: { 'SERVICE-API-KEY': bKey }, body: form })).json()) as { id: string };
    const batch = (await (await fetch(`${gw}/v1/batches`, { method: 'POST', headers: { 'SERVICE-API-KEY': bKey, 'content-type': 'application/json' }, body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }) })).json()) as { id: string };
    const progress = async () => ((await (await fetch(`${gw}/v1/batches/${batch.id}`, { headers: { 'SERVICE-API-KEY': bKey } })).json()) as { status: string; request_counts: { completed: number } });
    for (let p = await progress(); p.request_counts.completed < 50; p = await progress()) await new Promise((r) => setTimeout(r, 200));
    const before = (await progress()).request_counts.completed;
    const t0 = Date.now();
    const during = await measure();
    const after = await progress();
    const linesPerSecond = (after.request_counts.completed - before) / ((Date.now() - t0) / 1000);
    await fetch(`${gw}/v1/batches/${batch.id}/cancel`, { method: 'POST', headers: { 'SERVICE-API-KEY': bKey } });

    console.log(`| phase | interactive req/s | p50 ms | p99 ms | errors | batch lines/s |`);
    console.log(`|---|---:|---:|---:|---:|---:|`);
    console.log(`| alone | ${alone.rps.toFixed(0)} | ${alone.p50.toFixed(1)} | ${alone.p99.toFixed(1)} | ${alone.errors} | |`);
    console.log(`| with a ${LINES}-line batch running | ${during.rps.toFixed(0)} | ${during.p50.toFixed(1)} | ${during.p99.toFixed(1)} | ${during.errors} | ${linesPerSecond.toFixed(0)} |`);
    console.log(`batch ${batch.id}: ${after.request_counts.completed} of ${LINES} lines done when the measurement ended (status ${after.status}); cancelled`);
  } finally {
    await Promise.all(procs.map((p) => exited(p, 15_000)));
    await services.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
