import { partOfStack, readProfile, type CallFrame } from './profile-attribution';

/**
 * The CPU profile of one stage (`BENCH_STAGE_PROFILE=1 npm run bench:stages`, stages.ts): a V8
 * profile's samples carry their time on the monotonic clock the stage timeline uses
 * (stage-timeline.ts), so the samples a process took between two marks of a request are the work it
 * did in that stage. Each sample is charged to the first frame from the leaf up that is the
 * gateway's own code (a function of dist/, not of node_modules), else to its part
 * (profile-attribution.ts), so a stage's table names the functions on a request's path, and
 * `(idle)` is the time the process waited in that stage.
 */

export interface Samples {
  /** Each sample's time (µs, monotonic) and its label. */
  at: Float64Array;
  us: Float64Array;
  label: string[];
}

const own = /\/dist\/(api|workers|shared|scripts)\//;
/** The timeline preload's own frames are charged to what called them. */
const preload = /stage-timeline\.js$/;

function labelOf(stack: CallFrame[]): string {
  const leaf = stack[0];
  if (leaf && (leaf.functionName === '(idle)' || leaf.functionName === '(garbage collector)' || leaf.functionName === '(program)')) return leaf.functionName;
  const frames = stack.filter((f) => !preload.test(f.url));
  const mine = frames.find((f) => own.test(f.url) && !f.url.includes('node_modules'));
  const part = partOfStack(frames);
  if (!mine) return part;
  const file = mine.url.replace(/.*\/dist\//, '');
  return `${mine.functionName || '(anonymous)'} ${file}:${mine.lineNumber + 1}${part.startsWith('gateway') ? '' : ` [${part}]`}`;
}

/** A profile's samples with their times and labels. */
export function samplesOf(file: string): Samples {
  const { profile: p, labelOf: label } = readProfile(file, labelOf);
  const n = p.samples.length;
  const out: Samples = { at: new Float64Array(n), us: new Float64Array(n), label: new Array<string>(n) };
  let t = p.startTime;
  for (let i = 0; i < n; i++) {
    t += p.timeDeltas[i] ?? 0;
    out.at[i] = t;
    out.us[i] = i + 1 < n ? p.timeDeltas[i + 1] : 0; // a sample stands for the time until the next one
    out.label[i] = label(p.samples[i]);
  }
  return out;
}

/** µs per window of each label, over the samples that fall inside the windows ([from, to) each). */
export function chargeWindows(s: Samples, windows: Array<[number, number]>): Map<string, number> {
  const total = new Map<string, number>();
  const sorted = [...windows].sort((a, b) => a[0] - b[0]);
  let i = 0;
  for (const [from, to] of sorted) {
    while (i < s.at.length && s.at[i] < from) i++;
    for (let j = i; j < s.at.length && s.at[j] < to; j++) total.set(s.label[j], (total.get(s.label[j]) ?? 0) + s.us[j]);
  }
  for (const [k, v] of total) total.set(k, v / Math.max(1, windows.length));
  return total;
}

/** The `top` labels of a stage as markdown rows: µs a request. */
export function stageRows(name: string, charged: Map<string, number>, top = 8): string[] {
  const rows = [...charged].sort((a, b) => b[1] - a[1]);
  const all = rows.reduce((a, [, v]) => a + v, 0);
  return [
    `**${name}** (${all.toFixed(0)} µs of samples a request)`,
    '',
    '| µs | where |',
    '|---|---|',
    ...rows.slice(0, top).map(([k, v]) => `| ${v.toFixed(0)} | ${k.replace(/\|/g, '\\|')} |`),
    '',
  ];
}
