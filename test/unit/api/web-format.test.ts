import { expect } from 'chai';
import { budgetFigures, budgetText, count, counted, fixed, usd, usdMicros, utcText } from '../../../api/web/format';
import { dollarAxis } from '../../../api/dashboard/chart';

/** How the dashboard and the console write figures: thousands separated, dollars as billing dashboards write them. */
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
    expect(usd(12_345.5)).to.equal('$12,345.50');
    expect(budgetText(2_500_000_000, 'month')).to.equal('$2,500.00 per month');
  });

  it('dollars: $0.00 for none, cents with thousands separators from a dollar, under a dollar to the third significant digit (never $0.000000)', () => {
    const cases: Array<[number, string]> = [
      [0, '$0.00'], [-0, '$0.00'], [0.01, '$0.01'], [0.0153, '$0.0153'], [0.15349, '$0.153'], [0.1, '$0.10'], [0.5, '$0.50'], [0.999, '$0.999'], [0.9996, '$1.00'],
      [1, '$1.00'], [1.005, '$1.00'], [12.3456, '$12.35'], [1234.567, '$1,234.57'], [1_234_567.891, '$1,234,567.89'],
      [0.000123, '$0.000123'], [0.0001234, '$0.000123'], [0.00002, '$0.00002'], [0.000001, '$0.000001'], [0.005, '$0.005'], [0.00999, '$0.00999'],
      // rounded to three significant digits it is a cent: written as one
      [0.009999, '$0.01'], [0.0009999, '$0.001'], [0.0100001, '$0.01'],
      [-0.5, '-$0.50'], [-0.00002, '-$0.00002'],
    ];
    for (const [x, text] of cases) expect(usd(x), String(x)).to.equal(text);
    // micro-dollars, as every cost column, total and chart title writes them
    expect(usdMicros(1_234_567_890)).to.equal('$1,234.57');
    expect(usdMicros(47)).to.equal('$0.000047');
    expect(usdMicros(0)).to.equal('$0.00');
    expect(budgetText(20, 'total')).to.equal('$0.00002 in total');
    expect(budgetFigures({ spent_usd: 0, reserved_usd: 0, limit_usd: 1500, period: 'month', remaining_usd: 1500 })).to.equal('$0.00 spent, $0.00 reserved of $1,500.00 per month; $1,500.00 left');
  });

  it("a cost chart's axis: its three figures to the same decimals, whole dollars from $1,000, compact from a million", () => {
    const axis = (max: number) => [0, max / 2, max].map((v) => dollarAxis(v, max));
    expect(axis(1)).to.deep.equal(['$0.00', '$0.50', '$1.00']);
    expect(axis(0.05)).to.deep.equal(['$0.000', '$0.025', '$0.050']);
    expect(axis(0.0001)).to.deep.equal(['$0.00000', '$0.00005', '$0.00010']);
    expect(axis(500)).to.deep.equal(['$0.00', '$250.00', '$500.00']);
    expect(axis(2000)).to.deep.equal(['$0', '$1,000', '$2,000']);
    expect(axis(5_000_000)).to.deep.equal(['$0', '$2.5M', '$5.0M']);
  });

  it('UTC instants to the day, minute, second or millisecond', () => {
    const t = '2026-12-04T15:25:11.873000Z';
    expect(utcText(t, 'day')).to.equal('2026-12-04');
    expect(utcText(t)).to.equal('2026-12-04 15:25');
    expect(utcText(new Date(t), 'ms')).to.equal('2026-12-04 15:25:11.873');
  });
});
