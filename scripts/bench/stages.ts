import fs from 'fs';
import path from 'path';
import { runChatBench } from './processes';
import type { TimelineEvent } from './stage-timeline';
import { chargeWindows, samplesOf, stageRows } from './stage-profile';

/**
 * `npm run bench:stages`: where one request's time goes at concurrency 1, hop by hop, in the gateway
 * and in the floor (issue 29 §1, the c1 goals). Runs `npm run bench`'s JSON cell (BENCH_MODES=stream:
 * the streamed one; BENCH_SECONDS, default 6) with every process under the stage-timeline preload
 * (stage-timeline.ts), then follows each request through the web and worker processes' socket events
 * on the clock they share and prints the median of each stage. Only concurrency 1 can be followed
 * this way (one request in flight at a time); the preload adds a little to every socket event, so
 * read the stages against the floor's, not as the bench's latencies.
 */
const dist = path.resolve(__dirname, '..', '..');
const dir = path.resolve(process.env.BENCH_TIMELINE_DIR ?? path.join(dist, '..', '.data', 'timeline'));

/** The stages, in the order a request goes through them. */
export const STAGES = [
  ['web: request read → job add called', 'request', 'add'],
  ['web: add called → add written to Redis', 'add', 'addWritten'],
  ['Redis, the worker woken, the job fetched', 'addWritten', 'jobRead'],
  ['worker: job read → BullMQ begins it', 'jobRead', 'job'],
  ['worker: BullMQ → the processor called', 'job', 'processor'],
  ['worker: processor → upstream request handed to undici', 'processor', 'dispatch'],
  ['worker: undici → upstream request written', 'dispatch', 'upWritten'],
  ['upstream (the simulator, two hops)', 'upWritten', 'upRead'],
  ['worker: answer read → result written to Redis', 'upRead', 'resultWritten'],
  ['Redis and pub/sub to the web pod', 'resultWritten', 'replyRead'],
  ['web: reply read → response written', 'replyRead', 'responseWritten'],
] as const;
type Mark = (typeof STAGES)[number][1 | 2];

const after = (ev: TimelineEvent[], from: number, t: number, ok: (e: TimelineEvent) => boolean): number => {
  for (let i = from; i < ev.length; i++) if (ev[i][0] >= t && ok(ev[i])) return i;
  return -1;
};

/** Each request's marks, from the web's and the worker's events (one request in flight at a time). */
export function follow(web: TimelineEvent[], worker: TimelineEvent[]): Array<Record<Mark, number>> {
  const out: Array<Record<Mark, number>> = [];
  const requests = web.map((e, i) => (e[1] === 'request' ? i : -1)).filter((i) => i >= 0);
  for (let k = 0; k + 1 < requests.length; k++) {
    const [r, next] = [requests[k], web[requests[k + 1]][0]];
    const add = after(web, r, web[r][0], (e) => e[1] === 'add');
    if (add < 0) continue;
    const addWritten = after(web, add, web[add][0], (e) => e[1] === 'write' && e[2] === 'redis');
    if (addWritten < 0) continue;
    const upW = after(worker, 0, web[addWritten][0], (e) => e[1] === 'write' && e[2] === 'upstream');
    if (upW < 0) continue;
    let jobRead = -1;
    for (let i = upW - 1; i >= 0 && worker[i][0] >= web[addWritten][0]; i--) if (worker[i][1] === 'read' && worker[i][2] === 'redis') { jobRead = i; break; }
    const upR = after(worker, upW, worker[upW][0], (e) => e[1] === 'read' && e[2] === 'upstream');
    if (jobRead < 0 || upR < 0) continue;
    const job = after(worker, jobRead, worker[jobRead][0], (e) => e[1] === 'job');
    const processor = after(worker, jobRead, worker[jobRead][0], (e) => e[1] === 'processor');
    const dispatch = after(worker, jobRead, worker[jobRead][0], (e) => e[1] === 'dispatch');
    if ([job, processor, dispatch].some((i) => i < 0 || i > upW)) continue;
    const resultW = after(worker, upR, worker[upR][0], (e) => e[1] === 'write' && e[2] === 'redis');
    if (resultW < 0) continue;
    const replyR = after(web, addWritten, worker[resultW][0], (e) => e[1] === 'read' && e[2] === 'redis' && e[3].includes('message'));
    if (replyR < 0) continue;
    const respW = after(web, replyR, web[replyR][0], (e) => e[1] === 'write' && e[2] === 'client');
    if (respW < 0 || web[respW][0] > next) continue; // not one request at a time
    out.push({
      request: web[r][0],
      add: web[add][0],
      addWritten: web[addWritten][0],
      jobRead: worker[jobRead][0],
      job: worker[job][0],
      processor: worker[processor][0],
      dispatch: worker[dispatch][0],
      upWritten: worker[upW][0],
      upRead: worker[upR][0],
      resultWritten: worker[resultW][0],
      replyRead: web[replyR][0],
      responseWritten: web[respW][0],
    });
  }
  return out;
}

const median = (a: number[]): number => {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

function load(role: string): TimelineEvent[] {
  const file = fs.readdirSync(dir).find((f) => f.startsWith(`${role}.`));
  if (!file) throw new Error(`no timeline of ${role} in ${dir}`);
  const ev = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as TimelineEvent[];
  return ev.slice(Math.floor(ev.length * 0.3)); // the first 30 %: start-up and warm-up
}

/** Each side's requests, followed. */
function followed(): Record<'gateway' | 'floor', Array<Record<Mark, number>>> {
  return { gateway: follow(load('api_server.js'), load('workers_main.js')), floor: follow(load('scripts_bench_floor_web.js'), load('scripts_bench_floor_worker.js')) };
}

/** Which process's profile a stage is read from: the web's where the web holds the request, else the worker's. */
const WEB_STAGES = new Set<Mark>(['request', 'add', 'replyRead']);
const PROFILE_DIR = path.join(dir, 'profile');

/** BENCH_STAGE_PROFILE=1: each stage's samples of the process that holds the request in it (stage-profile.ts). */
export function stageProfiles(pairs = followed()): string {
  const out: string[] = [];
  for (const side of ['gateway', 'floor'] as const) {
    const [web, worker] = side === 'gateway' ? ['web', 'worker'] : ['floor-web', 'floor-worker'];
    const samples = { web: samplesOf(path.join(PROFILE_DIR, `${web}.cpuprofile`)), worker: samplesOf(path.join(PROFILE_DIR, `${worker}.cpuprofile`)) };
    out.push(`### ${side}: each stage's CPU samples (${pairs[side].length} requests)`, '');
    for (const [name, from, to] of STAGES) {
      const s = WEB_STAGES.has(from) || from === 'resultWritten' ? samples.web : samples.worker;
      out.push(...stageRows(name, chargeWindows(s, pairs[side].map((m) => [m[from], m[to]])), Number(process.env.BENCH_STAGE_TOP ?? 8)));
    }
  }
  return out.join('\n');
}

/** BENCH_LAYERS=1: each express layer's median µs from its call to its next() in the web (stage-timeline.ts). */
export function layerTable(): string {
  const rows: string[] = [];
  for (const [side, role] of [['gateway', 'api_server.js'], ['floor', 'scripts_bench_floor_web.js']] as const) {
    const by = new Map<string, number[]>();
    for (const e of load(role)) if (e[1] === 'layer') by.set(e[2], [...(by.get(e[2]) ?? []), Number(e[3])]);
    for (const [label, us] of by) rows.push(`| ${side} | ${label.replace(/\|/g, '\\|')} | ${us.length} | ${median(us).toFixed(0)} |`);
  }
  return ['| side | layer (its name and the start of its source) | calls | median µs to next() |', '|---|---|---|---|', ...rows].join('\n');
}

/** The stage table of the gateway beside the floor's. */
export function report(pairs = followed()): string {
  const rows = STAGES.map(([name, from, to]) => {
    const [g, f] = [median(pairs.gateway.map((m) => m[to] - m[from])), median(pairs.floor.map((m) => m[to] - m[from]))];
    return `| ${name} | ${g.toFixed(0)} | ${f.toFixed(0)} | ${g - f >= 0 ? '+' : ''}${(g - f).toFixed(0)} |`;
  });
  const total = (ms: Array<Record<Mark, number>>) => median(ms.map((m) => m.responseWritten - m.request));
  const [gt, ft] = [total(pairs.gateway), total(pairs.floor)];
  return [
    `requests followed: gateway ${pairs.gateway.length}, floor ${pairs.floor.length} (medians in µs)`,
    '',
    '| stage | gateway | floor | gateway − floor |',
    '|---|---|---|---|',
    ...rows,
    `| **request read → response written** | ${gt.toFixed(0)} | ${ft.toFixed(0)} | ${gt - ft >= 0 ? '+' : ''}${(gt - ft).toFixed(0)} |`,
  ].join('\n');
}

async function main(): Promise<void> {
  const profiled = process.env.BENCH_STAGE_PROFILE === '1';
  if (process.argv.includes('--again')) {
    // the tables of the last run again (its timelines and profiles are still in BENCH_TIMELINE_DIR)
    const pairs = followed();
    console.log(report(pairs));
    if (fs.existsSync(PROFILE_DIR)) console.log(`\n${stageProfiles(pairs)}`);
    if (process.env.BENCH_LAYERS === '1') console.log(`\n${layerTable()}`);
    return;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const env = {
    ...process.env,
    BENCH_TIMELINE_DIR: dir,
    BENCH_NODE_ARGS: `${process.env.BENCH_NODE_ARGS ?? ''} --require ${path.join(__dirname, 'stage-timeline.js')}`.trim(),
    BENCH_MODES: process.env.BENCH_MODES ?? 'json',
    BENCH_CONCURRENCY: '1',
    BENCH_SECONDS: process.env.BENCH_SECONDS ?? '6',
    ...(profiled ? { BENCH_PROFILE_DIR: PROFILE_DIR, BENCH_PROFILE_INTERVAL_US: process.env.BENCH_PROFILE_INTERVAL_US ?? '50' } : {}),
  };
  if (profiled) fs.mkdirSync(PROFILE_DIR, { recursive: true });
  await runChatBench(env);
  console.log(`\nOne request at concurrency 1, stage by stage (${env.BENCH_MODES}), ${new Date().toISOString()}:\n`);
  const pairs = followed();
  console.log(report(pairs));
  if (profiled) console.log(`\n${stageProfiles(pairs)}`);
  if (process.env.BENCH_LAYERS === '1') console.log(`\n${layerTable()}`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
