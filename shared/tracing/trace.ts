/**
 * The gateway's one door to OpenTelemetry tracing (docs/observability.md, "Tracing").
 *
 * Tracing is on only when the standard `OTEL_*` variables ask for it (an OTLP endpoint is set and
 * `OTEL_SDK_DISABLED` is not `true`). Then `startTracing` loads the SDK (shared/tracing/otel-sdk.ts,
 * the only module that imports an `@opentelemetry/*` package) with a lazy require. Otherwise
 * nothing of OpenTelemetry is loaded, `span()` returns one shared no-op object and callers skip their
 * attribute objects behind `span.recording`, so the hot path allocates nothing for tracing.
 */

export type AttrValue = string | number | boolean;
export type Attrs = Record<string, AttrValue | undefined>;
export type SpanKindName = 'internal' | 'server' | 'client' | 'producer' | 'consumer';

/** W3C trace context as it crosses a process boundary (job data, outbox record, HTTP headers). */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

export interface SpanHandle {
  /** False for the no-op span (tracing off) and for spans the sampler dropped: skip building attributes. */
  readonly recording: boolean;
  set(attrs: Attrs): void;
  /** Renames the span (a server span learns its route at the end). */
  rename(name: string): void;
  /** Marks the span failed. `type` is a code or class (`error.type`), never a message (it may quote the caller's input). */
  fail(type: string): void;
  /** A timestamped event on the span (e.g. the first streamed chunk). */
  event(name: string): void;
  /** Ends the span now, or at `endTime` (epoch ms). Idempotent. */
  end(endTime?: number): void;
  /** This span's context for a child in another process; undefined when tracing is off. */
  carrier(): TraceCarrier | undefined;
  /** The 32-hex trace id; undefined when tracing is off. */
  traceId(): string | undefined;
}

/** Where a new span hangs: a span of this process, a carrier from another one, or nothing (a new trace). */
export type SpanParent = SpanHandle | TraceCarrier | undefined;

export interface SpanOptions {
  kind?: SpanKindName;
  /** Epoch ms; default now. */
  startTime?: number;
  attributes?: Attrs;
}

/** What otel-sdk.ts provides once loaded. */
export interface Tracing {
  start(name: string, parent: SpanParent, opts?: SpanOptions): SpanHandle;
  shutdown(): Promise<void>;
}

/** The span of nothing: what every call returns while tracing is off. */
export const NOOP: SpanHandle = Object.freeze({
  recording: false,
  set: () => undefined,
  rename: () => undefined,
  fail: () => undefined,
  event: () => undefined,
  end: () => undefined,
  carrier: () => undefined,
  traceId: () => undefined,
});

let tracing: Tracing | undefined;

/** True when the environment asks for traces (OTLP endpoint set, SDK not disabled). */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return false;
  return !!(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** Whether spans are being made in this process. */
export function tracingOn(): boolean {
  return tracing !== undefined;
}

/**
 * Loads the SDK when the environment asks for it; `service` is the default `service.name`
 * (`OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` win). Call once at process start.
 */
export function startTracing(service: string): void {
  if (tracing || !tracingRequested()) return;
  // loaded here and only here: require keeps it lazy (a static import would load it in every process)
  const sdk = require('./otel-sdk') as typeof import('./otel-sdk');
  tracing = sdk.createTracing(service);
}

/** Exports what is buffered and stops; a process calls it when it stops. */
export async function stopTracing(): Promise<void> {
  const t = tracing;
  tracing = undefined;
  await t?.shutdown();
}

/** A span, or the shared no-op when tracing is off. */
export function span(name: string, parent: SpanParent, opts?: SpanOptions): SpanHandle {
  return tracing ? tracing.start(name, parent, opts) : NOOP;
}

/** A child of `parent`, or the no-op when there is none (a caller outside any traced request). */
export function childSpan(name: string, parent: SpanHandle | undefined, opts?: SpanOptions): SpanHandle {
  return parent && tracing ? tracing.start(name, parent, opts) : NOOP;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The trace id of a W3C `traceparent` (no SDK needed), or undefined when it is not one. */
export function traceIdOf(carrier: TraceCarrier | undefined): string | undefined {
  const m = carrier && TRACEPARENT.exec(carrier.traceparent);
  return m && !/^0+$/.test(m[1]) ? m[1] : undefined;
}
