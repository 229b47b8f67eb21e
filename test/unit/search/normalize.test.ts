import { expect } from 'chai';
import { clampCount, isoDay, plain, scoreOf } from '../../../workers/providers/search/normalize';
import { SEARCH_ADAPTERS } from '../../../workers/providers/search';
import { periodBounds, periodEnd, periodOf } from '../../../shared/search/period';

describe('web search: result normalisation and periods', () => {
  it('isoDay: YYYY-MM-DD from ISO dates, date-times and HTTP dates; nothing from relative ages or junk', () => {
    expect(isoDay('2025-01-15')).to.equal('2025-01-15');
    expect(isoDay('2025-01-15T10:30:00')).to.equal('2025-01-15');
    expect(isoDay('2025-01-15T23:30:00.000Z')).to.equal('2025-01-15');
    expect(isoDay('Wed, 15 Jan 2025 10:30:00 GMT')).to.equal('2025-01-15');
    expect(isoDay('3 days ago')).to.equal(undefined);
    expect(isoDay('')).to.equal(undefined);
    expect(isoDay(null)).to.equal(undefined);
    expect(isoDay(20250115)).to.equal(undefined);
  });

  it("clampCount: each provider's own range, its default when none is asked, integers only", () => {
    expect(clampCount(undefined, SEARCH_ADAPTERS.brave.count)).to.equal(10);
    expect(clampCount(0, SEARCH_ADAPTERS.brave.count)).to.equal(1);
    expect(clampCount(21, SEARCH_ADAPTERS.brave.count)).to.equal(20);
    expect(clampCount(21, SEARCH_ADAPTERS.tavily.count)).to.equal(20);
    expect(clampCount(101, SEARCH_ADAPTERS.exa.count)).to.equal(100);
    expect(clampCount(-5, SEARCH_ADAPTERS.exa.count)).to.equal(1);
    expect(clampCount(7.9, SEARCH_ADAPTERS.exa.count)).to.equal(7);
  });

  it("scoreOf: the provider's finite score, else falling with rank", () => {
    expect(scoreOf(0.42, 3, 10)).to.equal(0.42);
    expect(scoreOf(undefined, 0, 4)).to.equal(1);
    expect(scoreOf(Number.NaN, 1, 4)).to.equal(0.75);
    expect(scoreOf('0.9', 2, 4)).to.equal(0.5);
  });

  it('plain: strips highlight tags', () => {
    expect(plain('a <strong>b</strong> c')).to.equal('a b c');
  });

  it('periods are UTC calendar months', () => {
    expect(periodOf(new Date('2026-12-31T23:59:59Z'))).to.equal('2026-12');
    expect(periodEnd(new Date('2026-12-31T23:59:59Z')).toISOString()).to.equal('2027-01-01T00:00:00.000Z');
    expect(periodBounds('2026-02').end.toISOString()).to.equal('2026-03-01T00:00:00.000Z');
  });
});
