import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../../../shared/errors/ApiError';
import { errors } from '../../../shared/errors/codes';
import { logger } from '../../../shared/logger';
import { randomUUID } from 'crypto';

/** A tool's answer: the result as structured content and as JSON text. */
export function toolResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/**
 * A failed tool call as an MCP tool error (`isError`), carrying the gateway's envelope
 * `{ error: { code, message, status } }` (the spec's code) as JSON text. No structured content: a
 * client validates that against the tool's output schema, which describes results. Unexpected
 * errors are logged and answered `internal_error` with a reference, never a stack.
 */
export function toolError(err: unknown): CallToolResult {
  let e: ApiError;
  if (err instanceof ApiError) e = err;
  else {
    const id = randomUUID();
    logger.error({ err, errorId: id }, 'MCP tool failed with an unexpected error');
    e = errors.internal(id);
  }
  const body = { error: { ...e.toJSON(), status: e.status, ...(e.headers['Retry-After'] ? { retry_after: Number(e.headers['Retry-After']) } : {}) } };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}
