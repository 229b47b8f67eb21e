import { isRecord } from '../../../shared/is-record';
import type { HandedId } from '../../../shared/tenancy/handed-out-ids';

/**
 * The ids a native-bypass answer hands its organization, which Anthropic resolves in the platform's
 * shared workspace when a later request names them (shared/tenancy/handed-out-ids.ts records them,
 * api/routes/messages/shared-account-ids.ts lets the same org name them again). As @anthropic-ai/sdk
 * 1.17.0 types the answer (resources/beta/messages/messages.d.ts):
 *
 * - `container` `{id, expires_at}` of a Message (BetaMessage.container: "non-null if a container tool
 *   (e.g. code execution) was used"), and of a stream's `message_delta` (BetaRawMessageDeltaEvent.Delta
 *   .container) or `message_start` message: kept until its `expires_at` ("The time at which the
 *   container will expire"; every answer that uses the container again gives a later one);
 * - a file the code execution tool produced: `bash_code_execution_output` and `code_execution_output`
 *   blocks' `file_id` (BetaBashCodeExecutionOutputBlock, BetaCodeExecutionOutputBlock) inside a server
 *   tool result block (`…_tool_result`), which a stream sends whole in its `content_block_start`:
 *   Files API files are kept until deleted, so the gateway keeps them KEEP_MAX_MS;
 * - the Message's `id` when the request asked for a thread (`thread` `{type: "create"}` or
 *   `"continue"`, BetaMessageThreadParam: "hold this conversation's state under the response's `id`"):
 *   what `thread.previous_message_id` names next. Other answers' ids name no held state and are not
 *   recorded (an answer without these ids costs nothing).
 */
export const KEEP_MAX_MS = 30 * 24 * 3600_000;
/** A container whose answer gives no readable `expires_at` (the SDK types it as always there). */
export const CONTAINER_FALLBACK_MS = 3600_000;

/** The request asked Anthropic to hold the conversation under its answer's id. */
export const threaded = (body: Record<string, unknown>): boolean => isRecord(body.thread) && (body.thread.type === 'create' || body.thread.type === 'continue');

function containerId(c: unknown, now: number): HandedId[] {
  if (!isRecord(c) || typeof c.id !== 'string') return [];
  const until = typeof c.expires_at === 'string' ? Date.parse(c.expires_at) : NaN;
  const keepMs = Number.isFinite(until) ? Math.min(KEEP_MAX_MS, until - now) : CONTAINER_FALLBACK_MS;
  return keepMs > 0 ? [{ kind: 'container', id: c.id, keepMs }] : [];
}

const OUTPUT_TYPES = new Set(['bash_code_execution_output', 'code_execution_output']);

/** Files a server tool result block holds (none for any other block). */
export function producedFiles(block: unknown): HandedId[] {
  if (!isRecord(block) || typeof block.type !== 'string' || !block.type.endsWith('_tool_result')) return [];
  const out: HandedId[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!isRecord(v)) return;
    if (typeof v.type === 'string' && OUTPUT_TYPES.has(v.type) && typeof v.file_id === 'string') out.push({ kind: 'file', id: v.file_id, keepMs: KEEP_MAX_MS });
    for (const x of Object.values(v)) if (typeof x === 'object' && x !== null) walk(x);
  };
  walk(block.content);
  return out;
}

/** The ids of a Message (a JSON answer, or a stream's message_start message). */
export function messageIds(m: Record<string, unknown>, isThread: boolean, now = Date.now()): HandedId[] {
  const ids = containerId(m.container, now);
  if (Array.isArray(m.content)) for (const b of m.content) ids.push(...producedFiles(b));
  if (isThread && typeof m.id === 'string') ids.push({ kind: 'message', id: m.id, keepMs: KEEP_MAX_MS });
  return ids;
}

/** The ids one stream event carries: message_start's message, message_delta's container, a content block's files. */
export function eventIds(ev: Record<string, unknown> & { type: string }, isThread: boolean): HandedId[] {
  switch (ev.type) {
    case 'message_start':
      return messageIds(ev.message as Record<string, unknown>, isThread);
    case 'message_delta':
      return isRecord(ev.delta) ? containerId(ev.delta.container, Date.now()) : [];
    case 'content_block_start':
      return producedFiles(ev.content_block);
    default:
      return [];
  }
}
