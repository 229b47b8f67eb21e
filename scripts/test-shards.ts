import fs from 'fs';
import path from 'path';
import { spawn } from 'child_process';

/** The default selection: every compiled unit, integration and browser test under dist/test. */
export function defaultTestFiles(root = process.cwd()): string[] {
  const base = path.join(root, 'dist', 'test');
  return ['unit', 'integration', 'e2e'].flatMap((dir) => {
    const full = path.join(base, dir);
    if (!fs.existsSync(full)) return [];
    return (fs.readdirSync(full, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.test.js'))
      .map((f) => path.join('dist', 'test', dir, f))
      .sort();
  });
}

/** A compiled test file's key in test/timings.json: its source path under test/ (`dist/test/unit/x.test.js` → `unit/x.test.ts`). */
export function timingKey(file: string): string {
  return file.replace(/\\/g, '/').replace(/^dist\/test\//, '').replace(/\.js$/, '.ts');
}

const timingsFile = (root: string) => path.join(root, 'test', 'timings.json');

/** A `{file: seconds}` JSON file (test/timings.json, a shard's measurements); `{}` when missing or unreadable. */
function readTimings(file: string): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** A file not in test/timings.json (a new one) is assumed to take this long. */
const UNKNOWN_SECONDS = 1.5;

/**
 * Files split into `n` groups of about equal time, longest first onto the least loaded group
 * (test/timings.json: seconds per file as measured on a quiet run; only the balance depends on it).
 */
export function partition(files: string[], n: number, root = process.cwd()): string[][] {
  const seconds = readTimings(timingsFile(root)); // none: every file weighs the same
  const weight = (f: string) => seconds[timingKey(f)] ?? UNKNOWN_SECONDS;
  const groups = Array.from({ length: n }, () => ({ files: [] as string[], total: 0 }));
  for (const f of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const g = groups.reduce((min, x) => (x.total < min.total ? x : min));
    g.files.push(f);
    g.total += weight(f);
  }
  // each shard in name order, begun at its own point (shard i at i/n of its list): the browser suites
  // (e2e/, first by name) run one shard at a time instead of three chromiums at once on the start
  return groups.map((g, i) => rotated(g.files.sort(), Math.floor((g.files.length * i) / n)));
}

/** `files` begun at index `at`, the ones before it after the rest. */
function rotated(files: string[], at: number): string[] {
  return [...files.slice(at), ...files.slice(0, at)];
}

export interface ShardRun {
  /** 1-based, shown before each of the shard's output lines. */
  index: number;
  args: string[];
  env: NodeJS.ProcessEnv;
}

interface Tally {
  passing: number;
  failing: number;
  pending: number;
  code: number;
  /** Mocha's epilogue after its `N failing` line: each failed test's title, error and stack. */
  failures: string[];
}

/** Runs one mocha per shard at once, each line of output prefixed `[i] `; resolves with the shard's counts. */
function runShard(mochaBin: string, s: ShardRun): Promise<Tally> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [mochaBin, ...s.args], { env: s.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tally: Tally = { passing: 0, failing: 0, pending: 0, code: 0, failures: [] };
    let epilogue = false;
    const lines = (stream: NodeJS.ReadableStream, out: NodeJS.WritableStream) => {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) {
          const m = /^\s*(\d+) (passing|failing|pending)\b/.exec(line);
          if (m) tally[m[2] as 'passing' | 'failing' | 'pending'] = Number(m[1]);
          if (epilogue && stream === child.stdout) tally.failures.push(line);
          if (m?.[2] === 'failing') epilogue = true;
          out.write(`[${s.index}] ${line}\n`);
        }
      });
      stream.on('end', () => rest && out.write(`[${s.index}] ${rest}\n`));
    };
    lines(child.stdout, process.stdout);
    lines(child.stderr, process.stderr);
    child.on('close', (c, sig) => {
      tally.code = c ?? (sig ? 1 : 0);
      // a shard that failed without mocha counting a failure (a crash, a hook) is one failure
      if (tally.code !== 0 && tally.failing === 0) tally.failing = 1;
      resolve(tally);
    });
  });
}

/**
 * Runs the shards side by side and prints mocha's own summary lines for the whole run (what
 * `.ci/run` counts). Returns the exit code: 0 when every shard passed.
 */
export async function runShards(mochaBin: string, shards: ShardRun[]): Promise<number> {
  const started = Date.now();
  const tallies = await Promise.all(shards.map((s) => runShard(mochaBin, s)));
  const sum = (k: 'passing' | 'failing' | 'pending') => tallies.reduce((n, t) => n + t[k], 0);
  const minutes = Math.round((Date.now() - started) / 60_000);
  process.stdout.write(`\nall ${shards.length} shards:\n\n  ${sum('passing')} passing (${minutes}m)\n`);
  if (sum('pending')) process.stdout.write(`  ${sum('pending')} pending\n`);
  if (sum('failing')) process.stdout.write(`  ${sum('failing')} failing\n`);
  // each shard's failures again, so that the end of the run's output names them
  for (const [i, t] of tallies.entries()) {
    if (t.failures.length) process.stdout.write(`\nshard ${shards[i].index}:\n${t.failures.join('\n')}\n`);
  }
  return tallies.every((t) => t.code === 0) ? 0 : 1;
}

/**
 * `TEST_TIMINGS=write`: test/timings.json rewritten from the shards' measured files (each written by
 * test/helpers/timing-reporter.ts): every selected file with its new time, or its old one when the run
 * did not reach it; files no longer selected are dropped. Longest first, as partition reads them.
 */
export function writeTimings(measured: string[], files: string[], root = process.cwd()): void {
  const target = timingsFile(root);
  const fresh: Record<string, number> = Object.assign({}, ...measured.map(readTimings));
  const old = readTimings(target);
  const rows = files
    .map(timingKey)
    .map((k) => [k, fresh[k] ?? old[k]] as const)
    .filter((r): r is readonly [string, number] => r[1] !== undefined)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  fs.writeFileSync(target, `{\n${rows.map(([k, v]) => `${JSON.stringify(k)}: ${v.toFixed(1)}`).join(',\n')}\n}\n`);
  process.stdout.write(`test/timings.json: ${Object.keys(fresh).length} files measured, ${rows.length} written\n`);
}

