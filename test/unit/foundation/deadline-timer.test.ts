import { expect } from 'chai';
import { DeadlineTimer } from '../../../shared/deadline-timer';

/** When `fire` ran, as epoch ms, or undefined after `waitMs`. */
function firedAt(deadline: number, waitMs: number, clearAfterMs?: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const t = new DeadlineTimer(deadline, () => resolve(Date.now()));
    if (clearAfterMs !== undefined) setTimeout(() => t.clear(), clearAfterMs);
    setTimeout(() => resolve(undefined), waitMs);
  });
}

/** The Node timer the DeadlineTimer waits on now (its duration tells which list it is in). */
const pending = (t: DeadlineTimer) => (t as unknown as { timer: NodeJS.Timeout & { _idleTimeout: number } }).timer;

describe('DeadlineTimer', function () {
  this.timeout(10_000);

  const cases = [
    { name: 'a near deadline', inMs: 120, waitMs: 1_000, lateMs: 100 },
    { name: 'a deadline seconds away, after waiting the whole seconds first', inMs: 1_450, waitMs: 3_000, lateMs: 150 },
  ];
  for (const c of cases) {
    it(`fires at ${c.name}, not before`, async () => {
      const deadline = Date.now() + c.inMs;
      const at = await firedAt(deadline, c.waitMs);
      expect(at).to.be.a('number');
      expect(at!).to.be.at.least(deadline);
      expect(at! - deadline).to.be.below(c.lateMs);
    });
  }

  it('never fires before its deadline by the wall clock, wherever within a millisecond it was set (Node\'s timer clock is whole monotonic ms)', async () => {
    let early = 0;
    const all: Array<Promise<void>> = [];
    for (let i = 0; i < 400; i++) {
      const deadline = Date.now() + 3 + (i % 7);
      all.push(new Promise<void>((resolve) => new DeadlineTimer(deadline, () => (Date.now() < deadline && early++, resolve()))));
      // the next one a fraction of a millisecond later: the two clocks' millisecond edges fall everywhere
      const spin = process.hrtime.bigint();
      while (process.hrtime.bigint() - spin < BigInt(137_000 + (i % 5) * 61_000));
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(all);
    expect(early, 'timers that fired before their deadline').to.equal(0);
  });

  it('fires at once for a deadline already past', async () => {
    const at = await firedAt(Date.now() - 5, 500);
    expect(at).to.be.a('number');
  });

  it('never fires once cleared, in either wait', async () => {
    expect(await firedAt(Date.now() + 1_300, 2_000, 200), 'cleared in the first wait').to.equal(undefined);
    expect(await firedAt(Date.now() + 1_300, 2_000, 1_150), 'cleared in the rest').to.equal(undefined);
  });

  it('gives requests whose deadlines differ by milliseconds the same first duration (one timer list)', () => {
    const now = Date.now();
    const timers = [600_000, 600_137, 600_421, 600_980].map((ms) => new DeadlineTimer(now + ms, () => undefined));
    try {
      const durations = new Set(timers.map((t) => pending(t)._idleTimeout));
      expect(durations.size, [...durations].join(', ')).to.be.at.most(2); // a second boundary may fall between them
      for (const d of durations) expect(d % 1000).to.equal(0);
    } finally {
      timers.forEach((t) => t.clear());
    }
  });
});
