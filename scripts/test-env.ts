import { spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { ensureServices, TEST_PROFILE } from './services';
import { deleteKeysByPrefix } from './services/redis';
import { ensureDatabase } from './services/postgres';
import { defaultTestFiles, partition, runShards, writeTimings, type ShardRun } from './test-shards';
import { listenPorts } from './services/free-port';

/**
 * `npm test`: gets Redis and Postgres the way `npm start` does (the given URLs, else started here),
 * makes a fresh database of the tests' own (TEST_DATABASE_NAME, default gateway_test) and a Redis
 * key prefix of their own (TEST_REDIS_PREFIX, default gwtest), then runs mocha with the remaining
 * args. The full selection runs as shards side by side (TEST_SHARDS, default 3 on 2 cores or more;
 * most of a test's time is spent waiting on timers and other processes, so several mochas on two
 * cores take about half as long), each shard a run of its own database and prefix.
 */
/** Mocha options whose next argument is their value (`--reporter x.js` names a reporter, not a test file). */
const TAKES_VALUE = new Set(['--reporter', '-R', '--reporter-option', '-O', '--require', '-r', '--ui', '-u', '--config', '--package', '--grep', '-g', '--fgrep', '-f', '--timeout', '-t', '--slow', '-s', '--file']);

/** Whether the arguments select test files of their own (`--spec`, or a `.js` path not given as an option's value). */
function namesFiles(args: string[]): boolean {
  return args.some((a, i) => a === '--spec' || (a.endsWith('.js') && !a.startsWith('-') && !TAKES_VALUE.has(args[i - 1] ?? '')));
}

/**
 * How many mocha processes the full selection runs in: TEST_SHARDS, else 3 where there are 2 cores or
 * more (most of a shard's time is waiting: on 2 cores three shards took 8.3 minutes against two's 10,
 * and passed three runs in a row beside a CPU burner; docs/testing.md), else 1.
 */
function shardCount(): number {
  const asked = Number(process.env.TEST_SHARDS);
  if (Number.isInteger(asked) && asked >= 1) return asked;
  return os.availableParallelism() >= 2 ? 3 : 1;
}

/** The environment one mocha run gets: its own database, Redis prefix, gateway port, spool and image directory. */
function runEnv(services: { databaseUrl: string; redisUrl: string }, database: string, prefix: string, gatewayPort: string, audioSpool: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'test',
    TEST_DATABASE_NAME: database,
    TEST_REDIS_PREFIX: prefix,
    TEST_GATEWAY_PORT: gatewayPort,
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${gatewayPort}`,
    // `/metrics` on the public port answers only with this bearer token (api/middleware/metrics-gate.ts).
    METRICS_TOKEN: process.env.METRICS_TOKEN ?? 'test-metrics-token-0123456789',
    // Failed authentications per client IP: tests that fail in bulk send their own X-Forwarded-For.
    TRUST_PROXY: process.env.TRUST_PROXY ?? 'loopback',
    AUTH_FAILURE_LIMIT: process.env.AUTH_FAILURE_LIMIT ?? '300',
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_PREFIX: prefix,
    SECRET_KEY: process.env.SECRET_KEY ?? 'test-secret-key-test-secret-key-0123456789',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    // Short timers so failure paths (missed replies, dead workers) resolve within a test's time.
    REPLY_POLL_MS: process.env.REPLY_POLL_MS ?? '200',
    JOB_LOCK_MS: process.env.JOB_LOCK_MS ?? '2000',
    // A killed worker's unacknowledged usage outbox entries are claimed by a live drainer after this.
    USAGE_CLAIM_IDLE_MS: process.env.USAGE_CLAIM_IDLE_MS ?? '2000',
    LEASE_TTL_MS: process.env.LEASE_TTL_MS ?? '5000',
    // A killed worker's attempt stops counting toward its deployment's max_concurrency after this.
    POOL_INFLIGHT_LEASE_MS: process.env.POOL_INFLIGHT_LEASE_MS ?? '2000',
    // A pool of one retries its deployment after a backoff of 100 ms, 200 ms (500 ms, 1 s by default):
    // the tests of failing upstreams wait less, the cooldown tests read the setting.
    POOL_BACKOFF_BASE_MS: process.env.POOL_BACKOFF_BASE_MS ?? '100',
    CHAT_INTERACTIVE_CONCURRENCY: process.env.CHAT_INTERACTIVE_CONCURRENCY ?? '8',
    // The governor off: here the pods, the workers, the simulator and the test share one event loop, so
    // a loaded CI machine's lag would cut the workers to one job at a time and a test that holds several
    // requests upstream at once would wait for slots, not for the gateway. Its own tests turn it on.
    WORKER_LAG_MS: process.env.WORKER_LAG_MS ?? '0',
    CHAT_BACKGROUND_CONCURRENCY: process.env.CHAT_BACKGROUND_CONCURRENCY ?? '4',
    // Images: bytes under the run's own directory; URL-upload tests serve https on 127.0.0.2 with a
    // fixture certificate, which the operator allowlist trusts (127.0.0.1 and every other range stay refused).
    IMAGE_STORAGE_DIR: process.env.IMAGE_STORAGE_DIR ?? `.data/test-images/${prefix}`,
    IMAGE_FETCH_ALLOW_CIDRS: process.env.IMAGE_FETCH_ALLOW_CIDRS ?? '127.0.0.2/32',
    IMAGE_FETCH_CA_FILE: process.env.IMAGE_FETCH_CA_FILE ?? 'test/fixtures/tls/cert.pem',
    // Audio: a spool of this run's own, and short read and overall deadlines for the timeout tests.
    AUDIO_SPOOL_DIR: audioSpool,
    AUDIO_BODY_READ_TIMEOUT_MS: process.env.AUDIO_BODY_READ_TIMEOUT_MS ?? '3000',
    AUDIO_DEADLINE_MS: process.env.AUDIO_DEADLINE_MS ?? '6000',
    AUDIO_MAX_CONCURRENT: process.env.AUDIO_MAX_CONCURRENT ?? '3',
    // Decision models: a short slow-body timeout and deadline so those paths finish within a test.
    // Every other route's slow-body deadline, short for the same reason, but long enough for the tests
    // that send 21-36 MB bodies to be read (and drained past a cap, as body-parser does) on a busy machine.
    BODY_READ_TIMEOUT_MS: process.env.BODY_READ_TIMEOUT_MS ?? '3500',
    // The upstream answer cap below the production default, so a test's oversized answer is 80 MiB, not 300.
    UPSTREAM_MAX_RESPONSE_BYTES: process.env.UPSTREAM_MAX_RESPONSE_BYTES ?? String(64 * 1024 * 1024),
    // Token counting's time budget, short so the event-loop test's 15 MiB count ends in seconds.
    TOKEN_COUNT_TIMEOUT_MS: process.env.TOKEN_COUNT_TIMEOUT_MS ?? '3000',
    SYSTEMONE_BODY_TIMEOUT_MS: process.env.SYSTEMONE_BODY_TIMEOUT_MS ?? '1000',
    SYSTEMONE_TIMEOUT_MS: process.env.SYSTEMONE_TIMEOUT_MS ?? '5000',
  };
}

/** Drops the prefix's keys and the run's default audio spool; returns the spool directory. */
async function freshRun(redisUrl: string, prefix: string): Promise<string> {
  await deleteKeysByPrefix(redisUrl, prefix);
  // A fresh audio spool of the run's own (only the default one is emptied, never a given directory).
  const audioSpool = process.env.AUDIO_SPOOL_DIR ?? path.join(os.tmpdir(), `${prefix}-audio-spool`);
  if (!process.env.AUDIO_SPOOL_DIR) fs.rmSync(audioSpool, { recursive: true, force: true });
  return audioSpool;
}

async function main(): Promise<void> {
  const database = process.env.TEST_DATABASE_NAME ?? TEST_PROFILE.database;
  const prefix = process.env.TEST_REDIS_PREFIX ?? 'gwtest';
  const services = await ensureServices({ ...TEST_PROFILE, database });
  const mocha = require.resolve('mocha/bin/mocha.js');

  // Default: every compiled test, in shards side by side. Any arguments (e.g. a --spec or a file) replace that selection.
  const given = process.argv.slice(3);
  const selected = namesFiles(given) ? undefined : defaultTestFiles();
  const shards = selected ? Math.min(shardCount(), selected.length) : 1;
  // TEST_TIMINGS=write: each mocha measures its files (test/helpers/timing-reporter.ts), then test/timings.json is rewritten
  const measuring = !!selected && process.env.TEST_TIMINGS === 'write';
  const timingsOut = (i: number) => path.join(os.tmpdir(), `${prefix}-timings-${i}.json`);
  const measured: string[] = [];
  const measure = (e: NodeJS.ProcessEnv, i: number): NodeJS.ProcessEnv => {
    if (!measuring) return e;
    measured.push(timingsOut(i));
    fs.rmSync(timingsOut(i), { force: true });
    return { ...e, TEST_TIMINGS_OUT: timingsOut(i) };
  };
  let code: number;
  if (shards > 1) {
    // Each shard is a run of its own: database <name>_s<i>, prefix <prefix>s<i>, its own gateway port.
    const runs: ShardRun[] = [];
    const ports = await listenPorts(shards);
    for (const [i, files] of partition(selected!, shards).entries()) {
      const name = `${database}_s${i + 1}`;
      const shardPrefix = `${prefix}s${i + 1}`;
      const databaseUrl = await ensureDatabase(services.databaseUrl, name, true);
      const spool = await freshRun(services.redisUrl, shardPrefix);
      runs.push({ index: i + 1, args: [...files, ...given], env: measure(runEnv({ databaseUrl, redisUrl: services.redisUrl }, name, shardPrefix, String(ports[i]), spool), i + 1) });
    }
    code = await runShards(mocha, runs);
  } else {
    const spool = await freshRun(services.redisUrl, prefix);
    // The run's shared gateway listens here, and image URLs are built from configuration only (PUBLIC_BASE_URL).
    const gatewayPort = process.env.TEST_GATEWAY_PORT ?? String((await listenPorts(1))[0]);
    const args = selected ? [...selected, ...given] : given;
    const child = spawn(process.execPath, [mocha, ...args], { stdio: 'inherit', env: measure(runEnv(services, database, prefix, gatewayPort, spool), 1) });
    code = await new Promise<number>((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
  }
  if (measuring) writeTimings(measured, selected!);
  await services.stop();
  process.exit(code);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
