import { expect } from 'chai';
import { LRUCache } from 'lru-cache';
import { ttlOptions, ttlResolutionOf } from '../../../shared/cache/ttl-resolution';

describe('lru-cache clock resolution', () => {
  it('is a hundredth of the TTL, between 1 and 100 ms', () => {
    expect(ttlResolutionOf(60_000)).to.equal(100);
    expect(ttlResolutionOf(5_000)).to.equal(50);
    expect(ttlResolutionOf(300)).to.equal(3);
    expect(ttlResolutionOf(50)).to.equal(1);
    expect(ttlResolutionOf(1)).to.equal(1);
    expect(ttlOptions(5_000)).to.deep.equal({ ttl: 5_000, ttlResolution: 50 });
  });

  it('an entry still expires within 1 % of its TTL', async function () {
    this.timeout(5_000);
    const ttl = 400;
    const cache = new LRUCache<string, number>({ max: 10, ttl, ttlResolution: ttlResolutionOf(ttl) });
    cache.get('other'); // the clock reading a set may reuse
    await new Promise((r) => setTimeout(r, 2));
    cache.set('k', 1);
    const t = Date.now();
    while (cache.get('k') !== undefined) await new Promise((r) => setTimeout(r, 1));
    const lived = Date.now() - t;
    expect(lived).to.be.at.least(ttl - ttlResolutionOf(ttl) - 1);
    expect(lived).to.be.below(ttl + 4 + 20); // the resolution, plus a timer's lateness
  });
});
