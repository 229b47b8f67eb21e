import http from 'http';
import type { AddressInfo } from 'net';

/**
 * An OTLP/HTTP endpoint that accepts trace exports and throws them away (counting requests and bytes):
 * what `npm run bench` with BENCH_TRACING points the gateway's processes at, so the measured cost is
 * the gateway's (spans, batching, serialising, sending) and not a collector's.
 */
export async function startOtlpSink(): Promise<{ url: string; stats: { posts: number; bytes: number }; close(): Promise<void> }> {
  const stats = { posts: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (d: Buffer) => (stats.bytes += d.length));
    req.on('end', () => {
      stats.posts++;
      // an empty ExportTraceServiceResponse: zero bytes in protobuf
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The OTEL_* variables of a traced bench run: `ratio` of the traces sampled (1 = all). */
export function tracingEnv(sinkUrl: string, ratio: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: ratio,
  };
}
