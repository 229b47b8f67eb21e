import { expect } from 'chai';
import { execFileSync } from 'child_process';
import { readGcLogText } from '../../scripts/bench/gc-summary';

/**
 * Runs `script` in a child node process under V8's `--trace-gc-nvp` (with `nodeArgs` too) and returns
 * what its scavenges promoted, from V8's own trace (the bench's parser, scripts/bench/gc-summary.ts).
 */
export function promotedByScript(script: string, nodeArgs: string[] = []): { scavenges: number; promotedKbPerScavenge: number } {
  const out = execFileSync(process.execPath, ['--trace-gc-nvp', ...nodeArgs, '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const s = readGcLogText(out);
  return { scavenges: s.scavenges, promotedKbPerScavenge: s.scavenges ? s.promotedBytes / s.scavenges / 1024 : 0 };
}

type Promoted = ReturnType<typeof promotedByScript>;

/**
 * The two runs of one workload, `costly` (the construct that has ended requests promoted) and `cheap`
 * (its replacement): both made scavenges; `costly` promoted more than `aboveKb` a scavenge (if not, V8
 * or Node no longer does this: `why` says what that means); `cheap` under a fifth of `costly`.
 */
export function expectDiesYoung(costly: { name: string; run: Promoted; aboveKb: number; why: string }, cheap: { name: string; run: Promoted }): void {
  expect(costly.run.scavenges, 'the workload makes scavenges').to.be.at.least(10);
  expect(cheap.run.scavenges).to.be.at.least(10);
  expect(costly.run.promotedKbPerScavenge, `${costly.name} promotes the ended requests (${costly.why})`).to.be.above(costly.aboveKb);
  expect(cheap.run.promotedKbPerScavenge, `${cheap.name} ${cheap.run.promotedKbPerScavenge.toFixed(0)} KB against ${costly.name} ${costly.run.promotedKbPerScavenge.toFixed(0)} KB a scavenge`).to.be.below(costly.run.promotedKbPerScavenge / 5);
}
