import { expect } from 'chai';
import { budgetText, count, counted, fixed, usd, usdMicros, utcText } from '../../../api/web/format';

/** How the dashboard and the console write figures: thousands separated, dollars to the cent or the micro-dollar. */
describe('web figures (api/web/format.ts)', () => {
  it('counts and dollars carry thousands separators', () => {
    expect(count(0)).to.equal('0');
    expect(count(999)).to.equal('999');
    expect(count(1_234_567)).to.equal('1,234,567');
    expect(count(1234.6)).to.equal('1,235');
    expect(count(-1234567)).to.equal('-1,234,567');
    expect([counted(1, 'request'), counted(0, 'request'), counted(2500, 'token')]).to.deep.equal(['1 request', '0 requests', '2,500 tokens']);
    // rounded as toFixed, the digits the management API's figures give
    expect(fixed(0.0000235, 6)).to.equal((0.0000235).toFixed(6));
    expect(fixed(1234567.891, 2)).to.equal('1,234,567.89');
    expect(usd(0)).to.equal('$0');
    expect(usd(0.00002)).to.equal('$0.000020');
    expect(usd(12_345.5)).to.equal('$12,345.50');
    expect(usdMicros(1_234_567_890)).to.equal('$1,234.567890');
    expect(usdMicros(20)).to.equal('$0.000020');
    expect(budgetText(2_500_000_000, 'month')).to.equal('$2,500.00 per month');
  });

  it('UTC instants to the day, minute, second or millisecond', () => {
    const t = '2026-12-04T15:25:11.873000Z';
    expect(utcText(t, 'day')).to.equal('2026-12-04');
    expect(utcText(t)).to.equal('2026-12-04 15:25');
    expect(utcText(new Date(t), 'ms')).to.equal('2026-12-04 15:25:11.873');
  });
});
