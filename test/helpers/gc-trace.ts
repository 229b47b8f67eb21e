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

/** How many times the costly workload runs at most before the test says V8 no longer promotes it. */
const COSTLY_TRIES = 3;

/**
 * The two runs of one workload, `costly` (the construct that has ended requests promoted) and `cheap`
 * (its replacement): both made scavenges; `costly` promoted more than `aboveKb` a scavenge (if not, V8
 * or Node no longer does this: `why` says what that means); `cheap` under a fifth of `costly`. Whether a
 * costly run gets its first old table promoted at all depends on when V8's collections fall (a CI run
 * beside other shards read 150 KB once against 3,000 usually), so it runs up to COSTLY_TRIES times
 * until one run shows the promotion: a V8 that never promotes it still fails every try.
 */
export function expectDiesYoung(costly: { name: string; run: () => Promoted; aboveKb: number; why: string }, cheap: { name: string; run: () => Promoted }): void {
  let costlyRun = costly.run();
  for (let i = 1; i < COSTLY_TRIES && costlyRun.promotedKbPerScavenge <= costly.aboveKb; i++) costlyRun = costly.run();
  const cheapRun = cheap.run();
  expect(costlyRun.scavenges, 'the workload makes scavenges').to.be.at.least(10);
  expect(cheapRun.scavenges).to.be.at.least(10);
  expect(costlyRun.promotedKbPerScavenge, `${costly.name} promotes the ended requests in one of ${COSTLY_TRIES} runs (${costly.why})`).to.be.above(costly.aboveKb);
  expect(cheapRun.promotedKbPerScavenge, `${cheap.name} ${cheapRun.promotedKbPerScavenge.toFixed(0)} KB against ${costly.name} ${costlyRun.promotedKbPerScavenge.toFixed(0)} KB a scavenge`).to.be.below(costlyRun.promotedKbPerScavenge / 5);
}
