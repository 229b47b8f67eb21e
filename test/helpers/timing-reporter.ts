import fs from 'fs';
import path from 'path';
import Mocha from 'mocha';
import { timingKey } from '../../scripts/test-shards';

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Mocha.Runner.constants;


/**
 * mocha's spec reporter (the run's output is unchanged), which also measures each file's wall time:
 * from its first top-level suite's start to its last one's end, hooks included. With
 * TEST_TIMINGS_OUT set it writes `{file: seconds}` there when the run ends; `TEST_TIMINGS=write
 * npm test` merges the shards' files into test/timings.json (scripts/test-env.ts), the times the
 * shard split balances by.
 */
class TimingReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const out = process.env.TEST_TIMINGS_OUT;
    if (!out) return;
    const seconds = new Map<string, number>();
    const started = new Map<Mocha.Suite, number>();
    const topLevel = (s: Mocha.Suite) => !!s.file && !!s.parent?.root;
    runner.on(EVENT_SUITE_BEGIN, (s: Mocha.Suite) => {
      if (topLevel(s)) started.set(s, performance.now());
    });
    runner.on(EVENT_SUITE_END, (s: Mocha.Suite) => {
      const t0 = started.get(s);
      if (t0 === undefined) return;
      const key = timingKey(path.relative(process.cwd(), s.file!));
      seconds.set(key, (seconds.get(key) ?? 0) + (performance.now() - t0) / 1000);
    });
    runner.once(EVENT_RUN_END, () => {
      const rounded = Object.fromEntries([...seconds].map(([k, v]) => [k, Math.round(v * 10) / 10]));
      fs.writeFileSync(out, `${JSON.stringify(rounded, null, 1)}\n`);
    });
  }
}

export = TimingReporter;
