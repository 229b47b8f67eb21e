import escapeHtml from 'escape-html';
import { addDays } from '../../shared/metering/rollups';
import { raw, type Html } from '../web/html';
import { count, fixed } from '../web/format';

/** Also the legend's `.c0`…`.c7` classes in api/web/style.ts (the CSP allows no inline style). */
const COLORS = ['#2457c5', '#e07a1f', '#1d7a3a', '#9b3fb5', '#b3261e', '#0f8a8a', '#6b7280', '#c59a00'];

export interface Series {
  label: string;
  /** value per day (`YYYY-MM-DD`) */
  values: Map<string, number>;
}

/**
 * A stacked bar chart, one bar per UTC day in [from, to), as inline SVG (no script, no external asset).
 * Each segment's `<title>` shows its figure on hover (`format` writes it; the figure as is by default);
 * `axis` writes the y axis's figures, given the axis's top (compact by default: `2.5`, `1.5k`; `dollarAxis` on a cost chart).
 */
export function stackedBars(opts: { from: string; to: string; series: Series[]; title: string; format?: (v: number) => string; axis?: (v: number, max: number) => string }): { svg: Html; legend: Html } {
  const format = opts.format ?? String;
  const axisText = opts.axis ?? compact;
  const days: string[] = [];
  for (let d = opts.from; d < opts.to; d = addDays(d, 1)) days.push(d);
  const totals = days.map((d) => opts.series.reduce((s, x) => s + (x.values.get(d) ?? 0), 0));
  const max = niceCeil(Math.max(...totals, 0) || 1);
  const W = 1000, H = 260, L = 84, B = 28, T = 10;
  const bw = (W - L - 8) / days.length;
  const y = (v: number) => T + (H - T - B) * (1 - v / max);
  const parts: string[] = [];
  const axis: string[] = [];
  for (const f of [0, 0.5, 1]) {
    const v = max * f;
    parts.push(`<line x1="${L}" x2="${W}" y1="${y(v)}" y2="${y(v)}" stroke="#e3e6ec"/>`);
    axis.push(`<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end" font-size="14" fill="#5b6477">${escapeHtml(axisText(v, max))}</text>`);
  }
  const every = Math.max(5, Math.ceil(days.length / 12)); // a day label every few bars, ~12 at most
  days.forEach((d, i) => {
    let base = 0;
    opts.series.forEach((s, si) => {
      const v = s.values.get(d) ?? 0;
      if (!v) return;
      const top = y(base + v);
      parts.push(`<rect x="${L + i * bw + 1}" y="${top}" width="${Math.max(1, bw - 2)}" height="${y(base) - top}" fill="${COLORS[si % COLORS.length]}"><title>${escapeHtml(`${d} ${s.label}: ${format(v)}`)}</title></rect>`);
      base += v;
    });
    // the first and last labels start and end at their bar's edges: centred, they ran past the plot and were cut
    const [x, anchor] = i === 0 ? [L + i * bw, 'start'] : i === days.length - 1 ? [L + (i + 1) * bw, 'end'] : [L + i * bw + bw / 2, 'middle'];
    if (i % every === 0 || i === days.length - 1) parts.push(`<text x="${x}" y="${H - 8}" text-anchor="${anchor}" font-size="13" fill="#5b6477">${d.slice(5)}</text>`);
  });
  // the y axis is an SVG of its own that stays put while the bars scroll on a phone (opening at
  // their right end, the latest days); together they are the one 1000-wide chart on a wide screen
  const svg = raw(`<div class="plot"><svg class="yaxis" viewBox="0 0 ${L} ${H}" aria-hidden="true">${axis.join('')}</svg>`
    + `<div class="scroll"><svg viewBox="${L} 0 ${W - L} ${H}" role="img" aria-label="${escapeHtml(opts.title)}">${parts.join('')}</svg></div></div>`);
  const legend = raw(opts.series.map((s, i) => `<span><i class="c${i % COLORS.length}"></i>${escapeHtml(s.label)}</span>`).join(''));
  return { svg, legend };
}

/** The next 1, 2 or 5 times a power of ten, so the axis reads round numbers. */
function niceCeil(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((n) => n >= v)!;
}

/** A figure in a few characters, for an axis: `0`, `0.005`, `2.5`, `1.5k`, `2.0M`. */
function compact(v: number): string {
  if (v >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  if (Number.isInteger(v)) return String(v);
  return v >= 1 ? v.toFixed(1) : String(Number(v.toPrecision(2)));
}

/**
 * A cost axis's figure in dollars, its three figures (0, half the top, the top) to the same decimals:
 * cents or as many as the middle one needs (`$0.000`, `$0.025`, `$0.050`), whole dollars from $1,000
 * (`$1,000`, `$2,000`), `$2.5M` from a million.
 */
export function dollarAxis(v: number, max: number): string {
  if (max >= 1e6) return `$${compact(v)}`;
  if (max >= 1000) return `$${count(v)}`;
  let d = 2;
  while (d < 10 && Math.abs(Number((max / 2).toFixed(d)) - max / 2) > 1e-12) d++;
  return `$${fixed(v, d)}`;
}
