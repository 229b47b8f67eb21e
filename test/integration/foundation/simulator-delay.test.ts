import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';

/** The simulator's `delayMs` and `delayJitter` knobs (scripts/simulator/knobs.ts), which the bench's flood cell uses. */
describe('simulator: an answer delayed by delayMs, spread by delayJitter', () => {
  beforeEach(resetSim);
  afterEach(resetSim);

  const timed = async (): Promise<number> => {
    const t0 = performance.now();
    const r = await fetch(`${env().simUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat-1', messages: [{ role: 'user', content: 'delay me' }] }),
    });
    expect(r.status).to.equal(200);
    await r.json();
    return performance.now() - t0;
  };

  it('spreads each answer\'s delay over ± the fraction (80 ms ± 50 %: 40-120 ms), not one fixed time', async () => {
    env().sim.knobs.set('sim-chat-1', { delayMs: 80, delayJitter: 0.5 });
    const times = await Promise.all(Array.from({ length: 12 }, () => timed()));
    for (const t of times) expect(t, `${times.map(Math.round).join(', ')} ms`).to.be.at.least(39);
    // twelve uniform draws over 80 ms all within 15 ms of each other: about one chance in 10^7
    expect(Math.max(...times) - Math.min(...times), `${times.map(Math.round).join(', ')} ms`).to.be.above(15);
  });

  it('without delayJitter every answer waits delayMs', async () => {
    env().sim.knobs.set('sim-chat-1', { delayMs: 60 });
    const times = await Promise.all(Array.from({ length: 4 }, () => timed()));
    for (const t of times) expect(t, `${times.map(Math.round).join(', ')} ms`).to.be.at.least(59);
  });
});
