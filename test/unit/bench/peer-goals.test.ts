import { expect } from 'chai';
import { floorLines, goalLines, goals, type PeerRow } from '../../../scripts/bench/peer-goals';

/** One harness run's rows: direct, Portkey and ours, for JSON and streamed chat at c1 and c64. */
function run(o: { rps64: number; cpu64: number; stream64: number; p50: number; ttfb: number }): PeerRow[] {
  const row = (scenario: string, c: number, target: string, f: Partial<PeerRow>): PeerRow => ({ scenario, c, target, rps: 0, procCpuUsPerReq: 0, ...f });
  return [
    row('chat', 64, 'portkey', { rps: 1000, procCpuUsPerReq: 1000 }),
    row('chat', 64, 'ours', { rps: o.rps64, procCpuUsPerReq: o.cpu64 }),
    row('stream', 64, 'portkey', { rps: 800 }),
    row('stream', 64, 'ours', { rps: o.stream64 }),
    row('chat', 1, 'direct', { total: { p50: 0.3 } }),
    row('chat', 1, 'ours', { total: { p50: 0.3 + o.p50 } }),
    row('stream', 1, 'direct', { first: { p50: 0.2 } }),
    row('stream', 1, 'ours', { first: { p50: 0.2 + o.ttfb } }),
  ];
}

describe('bench:peers goals', () => {
  it('computes each goal of one run as ours over Portkey, or ours minus direct', () => {
    const g = goals(run({ rps64: 1700, cpu64: 650, stream64: 1000, p50: 1.5, ttfb: 2.5 }));
    expect(g.map((x) => [x.label.split(',')[0], Number(x.value!.toFixed(3)), x.met(x.value!)])).to.deep.equal([
      ['JSON chat c64', 1.7, true],
      ['JSON chat c64', 0.65, true],
      ['streamed chat c64', 1.25, false],
      ['JSON chat c1', 1.5, true],
      ['streamed chat c1', 2.5, false],
    ]);
  });

  it('decides a goal by the median of the rounds, listing each round, so one fast draw does not meet it', () => {
    const lines = goalLines([
      run({ rps64: 1700, cpu64: 900, stream64: 1000, p50: 1.8, ttfb: 3 }),
      run({ rps64: 1200, cpu64: 950, stream64: 1100, p50: 2.4, ttfb: 1.9 }),
      run({ rps64: 1300, cpu64: 1000, stream64: 1200, p50: 1.9, ttfb: 1.8 }),
    ]);
    expect(lines[0]).to.equal('JSON chat c64, requests/s vs Portkey: 1.30x (median of 3 rounds: 1.70, 1.20, 1.30) (goal ≥ 1.6x): NOT met');
    expect(lines[2]).to.equal('streamed chat c64, requests/s vs Portkey: 1.38x (median of 3 rounds: 1.25, 1.38, 1.50) (goal ≥ 1.3x): met');
    expect(lines[3]).to.match(/^JSON chat c1, added p50: 1\.90 ms .*: met$/);
    expect(lines[4]).to.match(/^streamed chat c1, added time to first byte \(p50\): 1\.90 ms .*: met$/);
    expect(lines).to.have.length(6);
  });

  it('a goal whose cells are missing from the run says so instead of a figure', () => {
    const lines = goalLines([run({ rps64: 1, cpu64: 1, stream64: 1, p50: 1, ttfb: 1 }).filter((r) => r.scenario !== 'stream')]);
    expect(lines[2]).to.equal('streamed chat c64, requests/s vs Portkey: not measured in this run (goal ≥ 1.3x)');
  });

  it('reads the floor\'s JSON cells against the same goals, as figures without a verdict, and skips the cells it has no rows for', () => {
    const rows = run({ rps64: 1, cpu64: 1, stream64: 1, p50: 1, ttfb: 1 })
      .filter((r) => r.target !== 'ours' && r.scenario === 'chat')
      .concat([
        { scenario: 'chat', c: 64, target: 'floor', rps: 1500, procCpuUsPerReq: 720 },
        { scenario: 'chat', c: 1, target: 'floor', rps: 400, procCpuUsPerReq: 2000, total: { p50: 1.6 } },
      ]);
    expect(floorLines([rows])).to.deep.equal([
      "floor, JSON chat c64, requests/s vs Portkey: 1.50x (the gateway's goal ≥ 1.6x)",
      "floor, JSON chat c64, CPU per request vs Portkey: 0.72x (the gateway's goal ≤ 0.7x)",
      "floor, JSON chat c1, added p50: 1.30 ms (the gateway's goal ≤ 2.0 ms)",
    ]);
    const slower = rows.map((r) => (r.target === 'floor' && r.c === 64 ? { ...r, rps: 1100 } : r));
    expect(floorLines([rows, slower, rows])[0]).to.equal("floor, JSON chat c64, requests/s vs Portkey: 1.50x (median of 3 rounds: 1.50, 1.10, 1.50) (the gateway's goal ≥ 1.6x)");
  });
});
