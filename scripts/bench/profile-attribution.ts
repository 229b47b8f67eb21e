import fs from 'fs';
import path from 'path';

/**
 * Reads V8 CPU profiles (`--cpu-prof`) and charges every sample to one part of the work: the first
 * frame from the leaf up that belongs to a known part (a library, a gateway feature, node's HTTP and
 * socket layers). Start-up (module loading) is left out. Used by `npm run bench:profile`
 * (profile.ts); docs/benchmark.md shows how to read the table.
 */

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  /** µs on the monotonic clock (V8's), when the first sample's delta starts. */
  startTime: number;
}

/**
 * A `--cpu-prof` file and the stack of each of its nodes (leaf first), each label of a leaf made once:
 * `label` maps a stack to what the reader charges its samples to.
 */
export function readProfile(file: string, label: (stack: CallFrame[]) => string): { profile: CpuProfile; labelOf: (leaf: number) => string; frameOf: (id: number) => CallFrame } {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string>();
  const labelOf = (leaf: number): string => {
    let l = memo.get(leaf);
    if (l === undefined) {
      const stack: CallFrame[] = [];
      for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) stack.push(byId.get(id)!.callFrame);
      l = label(stack);
      memo.set(leaf, l);
    }
    return l;
  };
  return { profile, labelOf, frameOf: (id) => byId.get(id)!.callFrame };
}

/** The parts, first match wins, tried on each frame from the leaf up. Gateway features before libraries. */
export const PARTS: Array<[string, RegExp]> = [
  ['garbage collection', /^\(garbage collector\)$/],
  ['validation (Joi)', /node_modules\/joi\//],
  ['metrics (prom-client)', /prom-client|middleware\/metrics|shared\/metrics/],
  ['request log', /middleware\/request-log|metering\/request-log/],
  ['authentication', /middleware\/authenticate|shared\/tenancy\/|shared\/auth\/|shared\/crypto/],
  ['body read and checks', /body-parser|raw-body|middleware\/(body|bounded-json|storable-body|require-json|body-deadline)|json-checks/],
  ['fair reading, governor', /fair-read|loop-lag|concurrency-governor/],
  ['key limits', /shared\/limits\//],
  ['lane leases', /shared\/lanes\//],
  ['model, route, pools', /dispatch\/route|shared\/catalog\/|workers\/routing\//],
  ['reply hub / publisher', /reply-hub|reply-publisher|reply-store|reply-messages/],
  ['usage outbox, drainer', /metering\/usage|usage-outbox|usage-drainer|usage-statement/],
  ['Postgres client (sequelize, pg)', /node_modules\/(sequelize|pg|pg-protocol|pg-pool)\//],
  ['BullMQ', /node_modules\/(bullmq|msgpackr)\/|shared\/queues\//],
  ['ioredis', /node_modules\/(ioredis|redis-errors|redis-parser|denque|cluster-key-slot)\/|shared\/redis\//],
  ['undici (upstream call)', /node_modules\/undici\/|^wasm:|workers\/providers\//],
  ['express and router', /node_modules\/(express|router|path-to-regexp|parseurl|finalhandler|on-finished|type-is|content-type|accepts|mime-types|negotiator|send|encodeurl|media-typer)\//],
  ['gateway: api/ (handlers, dispatch)', /\/dist\/api\//],
  ['gateway: workers/', /\/dist\/workers\//],
  ['gateway: shared/', /\/dist\/shared\//],
  ['floor: its own script', /\/dist\/scripts\/bench\/floor\//],
  ['node: HTTP, sockets, streams', /^node:(_http|net|internal\/streams|internal\/stream_base_commons|stream|internal\/http)|^(writev|writeBuffer|writeUtf8String|writeLatin1String|readBuffer)$/],
  ['node: events, timers, promises', /^node:(events|internal\/(timers|process\/task_queues|async_hooks|abort_controller|event_target))|^(runMicrotasks|processTicksAndRejections)$/],
];
const STARTUP = /node:internal\/main\/run_main_module|node:internal\/modules\//;

export interface Attribution {
  /** µs of busy CPU (not idle, not start-up) per part. */
  parts: Map<string, number>;
  busyUs: number;
}

/** The first part a stack's frames match, from the leaf up (unmatched: `other (V8 and native)`). */
export function partOfStack(stack: CallFrame[]): string {
  for (const f of stack) {
    const text = f.url || f.functionName;
    for (const [name, re] of PARTS) if (re.test(text)) return name;
  }
  return 'other (V8 and native)';
}

/** Charges each sample of one profile to a part (unmatched: `other (V8 and native)`). */
export function attribute(file: string): Attribution {
  const { profile: p, labelOf: partOf, frameOf } = readProfile(file, (stack) =>
    stack.some((f) => STARTUP.test(f.url) && f.functionName !== '') ? 'start-up' : partOfStack(stack),
  );
  const time = new Map<number, number>();
  p.samples.forEach((id, i) => time.set(id, (time.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const parts = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of time) {
    if (frameOf(id).functionName === '(idle)') continue;
    const part = partOf(id);
    if (part === 'start-up') continue;
    busyUs += us;
    parts.set(part, (parts.get(part) ?? 0) + us);
  }
  return { parts, busyUs };
}

/** The table: µs per request of each part, per process, for the gateway and the floor side by side. */
export function attributionTable(dir: string): string {
  const served = JSON.parse(fs.readFileSync(path.join(dir, 'requests.json'), 'utf8')) as { gateway: number; floor: number };
  const roles = [
    ['web', 'gateway'],
    ['floor-web', 'floor'],
    ['worker', 'gateway'],
    ['floor-worker', 'floor'],
  ] as const;
  const per = roles.map(([role, side]) => {
    const file = path.join(dir, `${role}.cpuprofile`);
    if (!fs.existsSync(file)) return undefined;
    const a = attribute(file);
    const n = Math.max(1, served[side]);
    return { parts: new Map([...a.parts].map(([k, v]) => [k, v / n])), total: a.busyUs / n };
  });
  const names = [...new Set(per.flatMap((x) => (x ? [...x.parts.keys()] : [])))];
  const value = (i: number, k: string) => per[i]?.parts.get(k) ?? 0;
  names.sort((a, b) => value(0, b) + value(2, b) - (value(0, a) + value(2, a)));
  const f = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(0));
  const lines = [
    `| part | gateway web | floor web | gateway worker | floor worker | gateway − floor (both processes) |`,
    `|---|---|---|---|---|---|`,
  ];
  for (const k of names) {
    const diff = value(0, k) + value(2, k) - value(1, k) - value(3, k);
    lines.push(`| ${k} | ${f(per[0] && value(0, k))} | ${f(per[1] && value(1, k))} | ${f(per[2] && value(2, k))} | ${f(per[3] && value(3, k))} | ${diff >= 0 ? '+' : ''}${diff.toFixed(0)} |`);
  }
  const tot = per.map((x) => x?.total);
  lines.push(`| **all (µs of profiled CPU per request)** | ${f(tot[0])} | ${f(tot[1])} | ${f(tot[2])} | ${f(tot[3])} | ${((tot[0] ?? 0) + (tot[2] ?? 0) - (tot[1] ?? 0) - (tot[3] ?? 0)).toFixed(0)} |`);
  lines.push('', `requests served (warm-up included): gateway ${served.gateway}, floor ${served.floor}`);
  return lines.join('\n');
}
