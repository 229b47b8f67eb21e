import type { PoolDeployment, RouteStep } from '../../shared/queues/payloads';
import type { AttemptOutcome } from './route-request';
import { childSpan, NOOP, type SpanHandle } from '../../shared/tracing/trace';
import { A, GEN_AI_OPERATIONS, PROVIDER_NAMES } from '../../shared/tracing/attributes';

/** host and port of an upstream base URL, for `server.address` / `server.port`. */
function serverOf(baseUrl: string): { host?: string; port?: number } {
  try {
    const u = new URL(baseUrl);
    return { host: u.hostname, port: u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80 };
  } catch {
    return {};
  }
}

/**
 * One upstream attempt as a client span under the job's span (GenAI conventions: `{operation} {model}`),
 * naming the deployment and the attempt number; a failed attempt ends with error status and its
 * failure class as `error.type` (connect, timeout, status_5xx, ...).
 */
export function attemptSpan(job: SpanHandle, c: { operation: string }, step: RouteStep, d: PoolDeployment, attempt: number): SpanHandle {
  if (!job.recording) return NOOP;
  const operation = GEN_AI_OPERATIONS[c.operation] ?? 'chat';
  const server = serverOf(d.baseUrl);
  return childSpan(`${operation} ${d.upstreamModel}`, job, {
    kind: 'client',
    attributes: {
      [A.genAiOperation]: operation,
      [A.genAiProvider]: PROVIDER_NAMES[d.kind] ?? d.kind,
      [A.genAiRequestModel]: d.upstreamModel,
      [A.serverAddress]: server.host,
      [A.serverPort]: server.port,
      [A.deployment]: d.name,
      [A.attempt]: attempt,
      [A.fallbackModel]: step.fallback ? step.model : undefined,
    },
  });
}

/** A successful attempt: its tokens, then the end. */
export function attemptServed(s: SpanHandle, outcome: AttemptOutcome): void {
  if (s.recording) s.set({ [A.genAiInputTokens]: outcome.usage.inputTokens, [A.genAiOutputTokens]: outcome.usage.outputTokens });
  s.end();
}
