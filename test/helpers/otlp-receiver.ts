import http from 'http';
import type { AddressInfo } from 'net';

/** One span as an OTLP/HTTP JSON export carries it, flattened with its process's service name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  events: string[];
}

type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

const valueOf = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue ?? v.boolValue ?? '');
const attrs = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
const nanosToMs = (n: string | number) => Number(BigInt(n) / 1_000_000n);

/**
 * An OTLP/HTTP receiver of the test's own (JSON protocol, `POST /v1/traces`): what an OpenTelemetry
 * collector would receive from the gateway's processes.
 */
export async function otlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; posts: string[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const posts: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    req.on('end', () => {
      posts.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body) as { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: any[] }> }> };
      for (const rs of parsed.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)['service.name'] ?? '');
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              statusCode: s.status?.code ?? 0,
              startMs: nanosToMs(s.startTimeUnixNano),
              endMs: nanosToMs(s.endTimeUnixNano),
              attributes: attrs(s.attributes),
              events: (s.events ?? []).map((e: { name: string }) => e.name),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    posts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
