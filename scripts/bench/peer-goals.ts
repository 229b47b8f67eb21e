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

/** The goals of issue 17, each with its measured ratio or figure and met / NOT met. */
export function goalLines(rows: PeerRow[], ours = 'ours'): string[] {
  const at = (scenario: string, c: number, target: string) => rows.find((r) => r.scenario === scenario && r.c === c && r.target === target);
  const line = (label: string, value: number | undefined, goal: string, met: (v: number) => boolean, unit = 'x') =>
    value === undefined || Number.isNaN(value)
      ? `${label}: not measured in this run (goal ${goal})`
      : `${label}: ${value.toFixed(2)}${unit} (goal ${goal}): ${met(value) ? 'met' : 'NOT met'}`;
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
    line('JSON chat c64, requests/s vs Portkey', ratio('chat', 64, (r) => r.rps), '≥ 1.6x', (v) => v >= 1.6),
    line('JSON chat c64, CPU per request vs Portkey', ratio('chat', 64, (r) => r.procCpuUsPerReq), '≤ 0.7x', (v) => v <= 0.7),
    line('streamed chat c64, requests/s vs Portkey', ratio('stream', 64, (r) => r.rps), '≥ 1.3x', (v) => v >= 1.3),
    line('JSON chat c1, added p50', added('chat', 1, (r) => r.total?.p50), '≤ 2.0 ms', (v) => v <= 2.0, ' ms'),
    line('streamed chat c1, added time to first byte (p50)', added('stream', 1, (r) => r.first?.p50), '≤ 2.0 ms', (v) => v <= 2.0, ' ms'),
    '2,000 held streaming connections on one web pod (RSS < 250 MB, none dropped): not part of the peer harness; measured by `npm run bench:held` (below)',
  ];
}
