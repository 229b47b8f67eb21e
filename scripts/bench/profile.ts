import fs from 'fs';
import path from 'path';
import { runChatBench } from './processes';
import { attributionTable } from './profile-attribution';

/**
 * `npm run bench:profile`: where the gateway's own work goes, per request, beside the floor's
 * (issue 29 §1). Runs `npm run bench`'s JSON chat cell (BENCH_MODES=stream: the streamed one) and
 * its floor cell (BENCH_CONCURRENCY, default 64; BENCH_SECONDS, default 8) with every gateway and
 * floor process under `--cpu-prof`, then charges each profile's samples to parts of the work
 * (profile-attribution.ts) and prints µs of CPU per request of each part in the gateway's web and
 * worker processes and the floor's. The profiler itself adds CPU, so read the parts against each
 * other and against the floor, not as the bench's figures. The profiles stay in BENCH_PROFILE_DIR
 * (default .data/profile) for a flame-graph viewer.
 */
const root = path.resolve(__dirname, '..', '..', '..');
const dir = path.resolve(process.env.BENCH_PROFILE_DIR ?? path.join(root, '.data', 'profile'));

async function main(): Promise<void> {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const env = {
    ...process.env,
    BENCH_PROFILE_DIR: dir,
    BENCH_MODES: process.env.BENCH_MODES ?? 'json', // 'stream': the streamed cell and its floor instead
    BENCH_CONCURRENCY: process.env.BENCH_CONCURRENCY ?? '64',
    BENCH_SECONDS: process.env.BENCH_SECONDS ?? '8',
  };
  await runChatBench(env);
  console.log(`\nCPU per request by part (µs, from --cpu-prof samples; start-up left out), ${new Date().toISOString()}:\n`);
  console.log(attributionTable(dir));
  console.log(`\nprofiles: ${dir}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
