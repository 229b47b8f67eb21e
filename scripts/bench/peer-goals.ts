/** One cell of the peer harness's raw results (bench.mjs). */
export interface PeerRow {
  scenario: string;
  c: number;
  target: string;
  rps: number;
  total?: { p50: number };
  first?: { p50: number };
  procCpuUsPerReq: number;
}

/** One goal of issue 17 and what a run measured for it (undefined: not in this run). */
export interface Goal {
  label: string;
  goal: string;
  unit: string;
  met: (v: number) => boolean;
  value: number | undefined;
}

/** The goals of issue 17 with one run's measured ratio or figure. */
export function goals(rows: PeerRow[], ours = 'ours'): Goal[] {
  const at = (scenario: string, c: number, target: string) => rows.find((r) => r.scenario === scenario && r.c === c && r.target === target);
  const ratio = (scenario: string, c: number, pick: (r: PeerRow) => number | undefined) => {
    const [a, b] = [at(scenario, c, ours), at(scenario, c, 'portkey')];
    const [x, y] = [a && pick(a), b && pick(b)];
    return x !== undefined && y !== undefined && y ? x / y : undefined;
  };
  const added = (scenario: string, c: number, pick: (r: PeerRow) => number | undefined) => {
    const [a, d] = [at(scenario, c, ours), at(scenario, c, 'direct')];
    const [x, y] = [a && pick(a), d && pick(d)];
    return x !== undefined && y !== undefined ? x - y : undefined;
  };
  return [
    { label: 'JSON chat c64, requests/s vs Portkey', goal: '≥ 1.6x', unit: 'x', met: (v) => v >= 1.6, value: ratio('chat', 64, (r) => r.rps) },
    { label: 'JSON chat c64, CPU per request vs Portkey', goal: '≤ 0.7x', unit: 'x', met: (v) => v <= 0.7, value: ratio('chat', 64, (r) => r.procCpuUsPerReq) },
    { label: 'streamed chat c64, requests/s vs Portkey', goal: '≥ 1.3x', unit: 'x', met: (v) => v >= 1.3, value: ratio('stream', 64, (r) => r.rps) },
    { label: 'JSON chat c1, added p50', goal: '≤ 2.0 ms', unit: ' ms', met: (v) => v <= 2.0, value: added('chat', 1, (r) => r.total?.p50) },
    { label: 'streamed chat c1, added time to first byte (p50)', goal: '≤ 2.0 ms', unit: ' ms', met: (v) => v <= 2.0, value: added('stream', 1, (r) => r.first?.p50) },
  ];
}

const HELD = '2,000 held streaming connections on one web pod (RSS < 250 MB, none dropped): not part of the peer harness; measured by `npm run bench:held` (below)';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** One goal over the rounds: its median and the note listing each round's figure (with several rounds). */
interface GoalOverRounds {
  goal: Goal;
  median?: number;
  each: string;
}

/** Each goal of `target` over the rounds; `median` is undefined when no round measured it. */
function overRounds(rounds: PeerRow[][], target: string): GoalOverRounds[] {
  const per = rounds.map((rows) => goals(rows, target));
  return per[0].map((goal, i) => {
    const values = per.map((p) => p[i].value).filter((v): v is number => v !== undefined && !Number.isNaN(v));
    if (values.length === 0) return { goal, each: '' };
    const each = values.length > 1 ? ` (median of ${values.length} rounds: ${values.map((x) => x.toFixed(2)).join(', ')})` : '';
    return { goal, median: median(values), each };
  });
}

/**
 * Each goal marked met or NOT met. With one run, by that run's figure; with several rounds, by the
 * median of the rounds (each round's figure listed), so one fast or slow draw of a shared VM does
 * not decide it.
 */
export function goalLines(rounds: PeerRow[][], ours = 'ours'): string[] {
  const lines = overRounds(rounds, ours).map(({ goal: g, median: v, each }) =>
    v === undefined ? `${g.label}: not measured in this run (goal ${g.goal})` : `${g.label}: ${v.toFixed(2)}${g.unit}${each} (goal ${g.goal}): ${g.met(v) ? 'met' : 'NOT met'}`,
  );
  return [...lines, HELD];
}

/**
 * The floor's runs read against the same goals, each as measured (the cells the runs had; with several
 * rounds the median, each round listed), without met/NOT met, since the floor is a yardstick and
 * not the product.
 */
export function floorLines(rounds: PeerRow[][]): string[] {
  return overRounds(rounds, 'floor').flatMap(({ goal: g, median: v, each }) =>
    v === undefined ? [] : [`floor, ${g.label}: ${v.toFixed(2)}${g.unit}${each} (the gateway's goal ${g.goal})`],
  );
}
