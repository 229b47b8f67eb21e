import { spawn } from 'child_process';
import fs from 'fs';
import path from 'path';
import { freePorts } from '../services/free-port';
import { procfileNodeArgs } from './procfile';
import { floorLines, goalLines, type PeerRow } from './peer-goals';

/**
 * `npm run bench:peers`: the peer yardstick of ../shared/bench/peers (direct stub, Portkey's gateway
 * and this checkout side by side in one run; its README) run against this checkout, the table and
 * the goals written into docs/benchmark.md between the `peers` markers.
 * PEERS_DIR: where the reference harness is (default ../shared/bench/peers); it is copied into
 * .data/peers (git-ignored) and run there with its ours.sh. PEERS_QUIET_WAIT_S (default 10): how
 * long the harness waits for a quiet machine before the run and before each cell (it runs anyway
 * after that, and its bg% column shows the foreign CPU). Other knobs of run.sh/bench.mjs
 * (CONCURRENCY, SCENARIOS, N_CHAT, ...) pass through. PEERS_ROUNDS (default 1): run the harness that many
 * times back to back and decide each goal by the median of the rounds.
 */
const root = path.resolve(__dirname, '..', '..', '..');
const source = path.resolve(process.env.PEERS_DIR ?? path.join(root, '..', 'shared', 'bench', 'peers'));
const work = path.join(root, '.data', 'peers');
const doc = path.join(root, 'docs', 'benchmark.md');
const START = '<!-- peers:start -->';
const END = '<!-- peers:end -->';
const FLOOR_SCRIPT = path.join(work, 'peers-floor.sh');

function copyHarness(): void {
  if (!fs.existsSync(path.join(source, 'ours.sh'))) throw new Error(`no peer harness at ${source} (set PEERS_DIR)`);
  const keep = path.join(work, 'node_modules');
  for (const entry of fs.existsSync(work) ? fs.readdirSync(work) : []) {
    if (path.join(work, entry) !== keep) fs.rmSync(path.join(work, entry), { recursive: true, force: true });
  }
  fs.mkdirSync(work, { recursive: true });
  for (const entry of fs.readdirSync(source)) if (entry !== 'node_modules' && entry !== 'results') fs.cpSync(path.join(source, entry), path.join(work, entry), { recursive: true });
  // the copy starts the web and worker processes with the Procfile's node flags, as a deployment does
  const ours = path.join(work, 'ours.sh');
  const script = fs.readFileSync(ours, 'utf8');
  const patched = script
    .replace('node dist/api/server.js', ['node', ...procfileNodeArgs('web'), 'dist/api/server.js'].join(' '))
    .replace('node dist/workers/main.js', ['node', ...procfileNodeArgs('chatworker'), 'dist/workers/main.js'].join(' '));
  if (!patched.includes('dist/api/server.js')) throw new Error('ours.sh no longer starts dist/api/server.js: update copyHarness');
  fs.writeFileSync(ours, patched);
}

/** Runs the harness once; returns its printed tables and its raw rows. */
async function runHarness(env: NodeJS.ProcessEnv, results: string, script = path.join(work, 'ours.sh')): Promise<{ table: string; rows: PeerRow[] }> {
  let table = '';
  const code = await new Promise<number>((resolve) => {
    const child = spawn('bash', [script], { cwd: work, env, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      table += String(d);
    });
    child.on('exit', (c) => resolve(c ?? 1));
  });
  if (code !== 0) throw new Error(`the peer harness exited with ${code}`);
  return { table: table.trim(), rows: (JSON.parse(fs.readFileSync(results, 'utf8')) as { results: PeerRow[] }).results };
}

/**
 * The environment of the floor's run: the harness's third column is the floor
 * (scripts/bench/floor/peers-floor.sh, copied beside ours.sh), JSON and streamed chat, run after each
 * of the gateway's rounds: the same goals read for the bare stack. Undefined (no floor) with
 * PEERS_FLOOR=0 or a SCENARIOS with neither chat nor stream.
 */
async function floorEnv(base: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv | undefined> {
  const scenarios = (base.SCENARIOS ?? 'chat stream').split(/\s+/).filter((x) => x === 'chat' || x === 'stream');
  if (process.env.PEERS_FLOOR === '0' || scenarios.length === 0) return undefined;
  fs.copyFileSync(path.join(root, 'scripts', 'bench', 'floor', 'peers-floor.sh'), FLOOR_SCRIPT);
  const [floorPort, floorRedisPort] = await freePorts(2);
  return {
    ...base,
    FLOOR_PORT: String(floorPort),
    FLOOR_REDIS_PORT: String(floorRedisPort),
    FLOOR_WEB_NODE_ARGS: procfileNodeArgs('web').join(' '),
    FLOOR_WORKER_NODE_ARGS: procfileNodeArgs('chatworker').join(' '),
    FLOOR_SCENARIOS: scenarios.join(' '),
  };
}

async function main(): Promise<void> {
  copyHarness();
  const results = path.join(work, 'results', 'last.json');
  const quiet = process.env.PEERS_QUIET_WAIT_S ?? '10';
  const rounds = Math.max(1, Number(process.env.PEERS_ROUNDS ?? 1) || 1);
  // distinct ports for every process of the run (two separate freePort calls can return the same one)
  const [stub, portkey, gw, gwRedis] = await freePorts(4);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GATEWAY_DIR: root,
    QUIET_WAIT_S: quiet,
    RESULTS_JSON: results,
    STUB_PORT: process.env.STUB_PORT ?? String(stub),
    PORTKEY_PORT: process.env.PORTKEY_PORT ?? String(portkey),
    GW_PORT: process.env.GW_PORT ?? String(gw),
    GW_REDIS_PORT: process.env.GW_REDIS_PORT ?? String(gwRedis),
  };
  // ours.sh runs the gateway with NODE_ENV=production, which requires the public base URL.
  env.PUBLIC_BASE_URL = process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${env.GW_PORT}`;
  const started = new Date();
  const runs: Array<{ table: string; rows: PeerRow[] }> = [];
  // each round: the gateway's run, then the floor's (so both medians span the same stretch of time)
  const floors: Array<{ table: string; rows: PeerRow[] }> = [];
  const withFloor = await floorEnv(env);
  for (let i = 0; i < rounds; i++) {
    if (rounds > 1) console.log(`# round ${i + 1} of ${rounds}`);
    runs.push(await runHarness(env, results));
    if (withFloor) floors.push(await runHarness(withFloor, results, FLOOR_SCRIPT));
  }
  const goals = goalLines(runs.map((r) => r.rows));
  console.log(goals.join('\n'));
  const floor = floors.length ? floorLines(floors.map((f) => f.rows)) : undefined;
  if (floor) console.log(floor.join('\n'));
  const shared = runs.some((r) => /# WARNING/.test(r.table));
  const tables = runs.flatMap((r, i) => [...(rounds > 1 ? [`Round ${i + 1} of ${rounds}:`, ''] : []), '```', r.table, '```', '']);
  const section = [
    START,
    `Command: \`npm run bench:peers\` (PEERS_QUIET_WAIT_S=${quiet}${rounds > 1 ? `, PEERS_ROUNDS=${rounds}` : ''}), run ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC on this 2-core machine;`,
    'gateway = one web and one worker process (chat + embeddings) and its own Redis.',
    shared
      ? 'The machine was shared with other work during the run (see the bg% column and the warning): within a round, all three targets ran under the same load.'
      : 'No other work ran on the machine during the run (bg% column).',
    rounds > 1 ? `The harness ran ${rounds} times back to back; each goal below is decided by the median of the rounds.` : 'The ratios are of one run.',
    '',
    ...tables,
    `Goals (issue 17), as ratios from ${rounds > 1 ? `the median of ${rounds} rounds` : 'this run'}:`,
    '',
    ...goals.map((g) => `- ${g}`),
    ...(floor
      ? [
          '',
          `The floor (\`scripts/bench/floor\`: express, \`express.json()\`, one BullMQ job per request, an undici call and a pub/sub reply; no authentication, validation, lanes, usage or metrics) in a run of its own right after ${rounds > 1 ? 'each round' : 'the gateway\'s'} (JSON and streamed chat), one web and one worker process and its own Redis, as for the gateway. What the mandated stack reaches with none of the gateway\'s work:`,
          '',
          ...floors.flatMap((f, i) => [...(rounds > 1 ? [`Floor, round ${i + 1} of ${rounds}:`, ''] : []), '```', f.table, '```', '']),
          ...floor.map((l) => `- ${l}`),
        ]
      : []),
    END,
  ].join('\n');
  const text = fs.readFileSync(doc, 'utf8');
  const next = text.includes(START) ? text.slice(0, text.indexOf(START)) + section + text.slice(text.indexOf(END) + END.length) : `${text.trimEnd()}\n\n## Peer yardstick: direct, Portkey and this gateway\n\n${section}\n`;
  fs.writeFileSync(doc, next);
  console.log(`written to ${path.relative(root, doc)}`);
}

main().catch((err) => {
  console.error((err as Error).message);
  process.exit(1);
});
