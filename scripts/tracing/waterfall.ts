/**
 * `node dist/scripts/tracing/waterfall.js <spans.json> <out.html> [out.png]`: draws one trace as a
 * waterfall (what Jaeger's trace view shows), for docs/observability.md when no Jaeger is at hand.
 * The input is the span list test/integration/tracing writes to `.data/traces/chat-trace.json`
 * (service, name, ids, start/end in ms, attributes, status); with a third argument the page is
 * also screenshotted with chromium (playwright-core, CHROMIUM_PATH or /usr/bin/chromium).
 */
import fs from 'fs';

export interface WaterfallSpan {
  service: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  statusCode: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const SHOWN = ['gateway.deployment', 'gateway.attempt', 'gen_ai.request.model', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens', 'gateway.queue.wait_ms', 'gateway.lane', 'error.type', 'http.response.status_code'];

/** Depth-first order: each span after its parent, siblings by start time. */
function ordered(spans: WaterfallSpan[]): Array<{ s: WaterfallSpan; depth: number }> {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, WaterfallSpan[]>();
  for (const s of spans) {
    const p = ids.has(s.parentSpanId) ? s.parentSpanId : '';
    children.set(p, [...(children.get(p) ?? []), s]);
  }
  const out: Array<{ s: WaterfallSpan; depth: number }> = [];
  const walk = (parent: string, depth: number) => {
    for (const s of (children.get(parent) ?? []).sort((a, b) => a.startMs - b.startMs)) {
      out.push({ s, depth });
      walk(s.spanId, depth + 1);
    }
  };
  walk('', 0);
  return out;
}

export function waterfallHtml(traceId: string, spans: WaterfallSpan[]): string {
  const t0 = Math.min(...spans.map((s) => s.startMs));
  const total = Math.max(1, Math.max(...spans.map((s) => s.endMs)) - t0);
  const colors: Record<string, string> = { 'gateway-web': '#4f7cff', 'gateway-worker': '#f08a24' };
  const rows = ordered(spans)
    .map(({ s, depth }) => {
      const left = ((s.startMs - t0) / total) * 100;
      const width = Math.max(0.4, ((s.endMs - s.startMs) / total) * 100);
      const attrs = SHOWN.filter((k) => s.attributes[k] !== undefined).map((k) => `${k}=${s.attributes[k]}`).join('  ');
      const color = s.statusCode === 2 ? '#e5484d' : (colors[s.service] ?? '#888');
      return `<tr><td class="svc" style="color:${colors[s.service] ?? '#555'}">${esc(s.service)}</td>
<td class="name" style="padding-left:${8 + depth * 16}px">${esc(s.name)}${s.statusCode === 2 ? ' <b class="err">error</b>' : ''}<div class="attrs">${esc(attrs)}</div></td>
<td class="bar"><div style="margin-left:${left}%;width:${width}%;background:${color}"></div><span style="margin-left:${left}%">${(s.endMs - s.startMs).toFixed(0)} ms</span></td></tr>`;
    })
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>trace ${traceId}</title><style>
body{font:13px system-ui,sans-serif;margin:24px;color:#222}h1{font-size:16px;margin:0 0 4px}p{margin:0 0 16px;color:#666}
table{border-collapse:collapse;width:100%}td{border-bottom:1px solid #eee;padding:4px 8px;vertical-align:top}
.svc{width:120px;font-weight:600}.name{width:430px}.attrs{color:#888;font-size:11px}.err{color:#e5484d}
.bar div{height:12px;border-radius:2px}.bar span{font-size:11px;color:#666;display:block}
</style></head><body><h1>Trace ${traceId}</h1><p>${spans.length} spans, ${total.toFixed(0)} ms, services: ${[...new Set(spans.map((s) => s.service))].join(', ')}</p>
<table>${rows}</table></body></html>`;
}

async function main(): Promise<void> {
  const [input, html, png] = process.argv.slice(2);
  if (!input || !html) throw new Error('usage: waterfall.js <spans.json> <out.html> [out.png]');
  const { traceId, spans } = JSON.parse(fs.readFileSync(input, 'utf8')) as { traceId: string; spans: WaterfallSpan[] };
  fs.writeFileSync(html, waterfallHtml(traceId, spans));
  if (!png) return;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`file://${fs.realpathSync(html)}`);
    await page.screenshot({ path: png, fullPage: true });
  } finally {
    await browser.close();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(String(err));
    process.exit(1);
  });
}
