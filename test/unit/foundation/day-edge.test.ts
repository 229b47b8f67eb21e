import { expect } from 'chai';
import { msToDayEdge } from '../../helpers/hooks';

/** The root hook that keeps a test from starting in the last 20 s of a UTC day (test/helpers/hooks.ts). */
describe('tests start clear of midnight UTC', () => {
  const midnight = Date.UTC(2026, 11, 3);
  it('waits out the last 20 s of a day, a little past midnight', () => {
    expect(msToDayEdge(midnight - 19_000)).to.equal(19_050);
    expect(msToDayEdge(midnight - 1)).to.equal(51);
  });
  it('does not wait the rest of the day', () => {
    expect(msToDayEdge(midnight - 20_000)).to.equal(0);
    expect(msToDayEdge(midnight)).to.equal(0);
    expect(msToDayEdge(midnight + 43_200_000)).to.equal(0);
  });
});
