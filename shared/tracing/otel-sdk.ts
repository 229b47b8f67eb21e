/**
 * The OpenTelemetry SDK behind shared/tracing/trace.ts, loaded only when tracing is requested.
 * Everything is configured by the standard variables: the OTLP exporter reads
 * `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` / `_HEADERS` / `_TIMEOUT` itself, the provider reads
 * `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` and `OTEL_BSP_*`, the resource
 * `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`. `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL` picks
 * the exporter: `http/protobuf` (the specification's default) or `http/json`.
 */
import { context, trace, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Context, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { StartupError } from '../startup/startup-error';
import type { Attrs, SpanHandle, SpanOptions, SpanParent, TraceCarrier, Tracing } from './trace';

const KINDS = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT, producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER };
const propagator = new W3CTraceContextPropagator();
const carrierGetter = {
  keys: (c: TraceCarrier) => Object.keys(c),
  get: (c: TraceCarrier, key: string) => (key === 'traceparent' ? c.traceparent : key === 'tracestate' ? c.tracestate : undefined),
};

/** The exporter `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL` names. */
function exporter(): SpanExporter {
  const protocol = (process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || process.env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  if (protocol === 'http/protobuf') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
    return new OTLPTraceExporter();
  }
  throw new StartupError(`OTEL_EXPORTER_OTLP_PROTOCOL '${protocol}' is not supported: use http/protobuf or http/json`);
}

const clean = (attrs: Attrs | undefined) => {
  if (!attrs) return undefined;
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) out[k] = v;
  return out;
};

class OtelSpan implements SpanHandle {
  readonly recording: boolean;
  private ended = false;
  constructor(readonly span: Span) {
    this.recording = span.isRecording();
  }
  set(attrs: Attrs): void {
    if (this.recording) this.span.setAttributes(clean(attrs)!);
  }
  rename(name: string): void {
    if (this.recording) this.span.updateName(name);
  }
  fail(type: string): void {
    if (!this.recording) return;
    this.span.setAttribute(ATTR_ERROR_TYPE, type);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: type });
  }
  event(name: string): void {
    if (this.recording) this.span.addEvent(name);
  }
  end(endTime?: number): void {
    if (this.ended) return;
    this.ended = true;
    this.span.end(endTime);
  }
  carrier(): TraceCarrier | undefined {
    const c: Partial<TraceCarrier> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, this.span), c, { set: (o, k, v) => ((o as Record<string, string>)[k] = v) });
    return c.traceparent ? (c as TraceCarrier) : undefined;
  }
  traceId(): string | undefined {
    return this.span.spanContext().traceId;
  }
}

function parentContext(parent: SpanParent): Context {
  if (!parent) return ROOT_CONTEXT;
  if (parent instanceof OtelSpan) return trace.setSpan(ROOT_CONTEXT, parent.span);
  if ('traceparent' in parent && typeof parent.traceparent === 'string') return propagator.extract(ROOT_CONTEXT, parent, carrierGetter);
  return ROOT_CONTEXT; // the no-op span of a process whose tracing started later: a new trace
}

export function createTracing(service: string): Tracing {
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter())] });
  // No context manager: every span names its parent explicitly (parentContext), so the SDK's
  // AsyncLocalStorage manager would only add an async hook to every promise of the process, which cost
  // as much CPU at 1 % sampling as at 100 % (docs/observability.md, What it costs).
  provider.register({ contextManager: null });
  const tracer = provider.getTracer('inference-gateway');
  return {
    start(name: string, parent: SpanParent, opts: SpanOptions = {}): SpanHandle {
      const s = tracer.startSpan(name, { kind: KINDS[opts.kind ?? 'internal'], startTime: opts.startTime, attributes: clean(opts.attributes) }, parentContext(parent));
      return new OtelSpan(s);
    },
    async shutdown() {
      await provider.shutdown();
      context.disable();
    },
  };
}
