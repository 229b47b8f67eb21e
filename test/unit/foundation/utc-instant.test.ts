import { expect } from 'chai';
import { utcInstant } from '../../../shared/utc-instant';
import { isVersionDate } from '../../../api/routes/messages/version';
import { usageRange } from '../../../api/dashboard/usage-page';

/** The one check that a UTC date or date-time exists (Activity's from/to, the usage page's days, the request-log cursor, anthropic-version). */
describe('utcInstant: a UTC date or date-time that really exists', () => {
  it('reads a date as its midnight, a date-time to the minute or second', () => {
    expect(utcInstant('2026-02-28')?.toISOString()).to.equal('2026-02-28T00:00:00.000Z');
    expect(utcInstant('2028-02-29T23:59')?.toISOString()).to.equal('2028-02-29T23:59:00.000Z');
    expect(utcInstant('2026-11-27T10:00:59')?.toISOString()).to.equal('2026-11-27T10:00:59.000Z');
  });

  it('refuses what Date would roll over into another day, and what Date cannot read', () => {
    for (const v of ['2026-02-29', '2026-02-31', '2026-04-31T10:00', '2026-01-01T24:00', '2026-01-01T23:60', '2026-11-27T25:00:00', '2026-13-01', '2026-00-10', 'x']) {
      expect(utcInstant(v), v).to.equal(undefined);
    }
  });

  it('anthropic-version takes a real YYYY-MM-DD date only', () => {
    expect(isVersionDate('2023-06-01')).to.equal(true);
    for (const v of ['2023-02-30', '2023-6-01', '2023-06-01T00:00', '']) expect(isVersionDate(v), v).to.equal(false);
  });

  it("the usage page's days: a day that does not exist is not a date, a real one is taken", () => {
    for (const v of ['2026-02-29', '2025-02-30', '2024-04-31', '2024-13-01', '2024-00-10']) {
      expect(() => usageRange({ from: v, to: '2026-03-31' }), v).to.throw(`from: '${v}' is not a date (YYYY-MM-DD).`);
    }
    expect(usageRange({ from: '2024-02-29', to: '2024-03-01' })).to.deep.equal({ from: '2024-02-29', to: '2024-03-01', end: '2024-03-02' });
    expect(() => usageRange({ to: '1969-12-31' })).to.throw('to: 1969-12-31 is before 1970-01-01.');
  });
});
