import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../../../shared/errors/ApiError';
import { errors } from '../../../shared/errors/codes';
import { asUnavailable } from '../../../shared/errors/unavailable';
import { logger } from '../../../shared/logger';
import { randomUUID } from 'crypto';
import { ClientGone } from '../../../shared/errors/ClientGone';

/**
 * A tool's answer: the result as structured content and as JSON text (the spec's "a tool that returns
 * structured content SHOULD also return the serialized JSON in a TextContent block"), then `more`
 * blocks (generate_image's resource links).
 */
export function toolResult(value: Record<string, unknown>, more: ContentBlock[] = []): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) } as ContentBlock].concat(more), structuredContent: value };
}

/**
 * The gateway error a failed tool call answers, as the error handler decides it for REST routes: a
 * typed error as it is, a Redis or Postgres outage 503 `service_unavailable` (Retry-After), anything
 * else logged and answered `internal_error` with a reference, never a stack.
 */
export function asToolError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const down = asUnavailable(err);
  if (down) return down;
  // The client left (the call was cancelled with it): nobody reads the answer, and nothing failed.
  if (err instanceof ClientGone || (err as { name?: string } | null)?.name === 'AbortError') return new ApiError(499, 'client_closed_request', 'The client closed the request.');
  const id = randomUUID();
  logger.error({ err, errorId: id }, 'MCP tool failed with an unexpected error');
  return errors.internal(id);
}

/**
 * A failed tool call as an MCP tool error (`isError`), carrying the gateway's envelope
 * `{ error: { code, message, status } }` (the spec's code) as JSON text, with `retry_after` (seconds)
 * when the error is retryable. No structured content: a client validates that against the tool's
 * output schema, which describes results.
 */
export function toolError(err: unknown): CallToolResult {
  const e = asToolError(err);
  const body = { error: { ...e.toJSON(), status: e.status, ...(e.headers['Retry-After'] ? { retry_after: Number(e.headers['Retry-After']) } : {}) } };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}
