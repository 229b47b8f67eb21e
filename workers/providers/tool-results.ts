import { isRecord } from '../../shared/is-record';

/**
 * What the canonical request says of tool results beyond a chat tool message's text: a failed result
 * (`is_error`, the messages dialect's tool_result flag) and the results' images and files (`tool_media`).
 *
 * Tool results' images and files on the canonical request. A chat tool message carries text only, so
 * the dialects put a tool result's images and files in the user message right after the turn's tool
 * results, and name on it (`tool_media`, api/dialects/canonical.ts) the `tool_call_id` each of its
 * first content parts came from. Anthropic (ToolResultBlockParam.content: text, image and document
 * blocks) and Bedrock (ToolResultContentBlock: text, image, document) take them inside the tool result
 * itself; an OpenAI-compatible upstream gets the user message as it is, without the field.
 */
export const TOOL_MEDIA = 'tool_media';

/** The `tool_call_id` of each leading content part of a user message that came from a tool result; [] for any other message. */
export function toolMediaOf(m: { role?: unknown; content?: unknown; tool_media?: unknown }): string[] {
  const ids = m.tool_media;
  if (m.role !== 'user' || !Array.isArray(ids) || !Array.isArray(m.content) || ids.length > m.content.length) return [];
  return ids.every((id) => typeof id === 'string') ? (ids as string[]) : [];
}

/** A failed tool result (`is_error: true` on a tool message). */
export const isFailedResult = (m: { role?: unknown; is_error?: unknown }): boolean => m.role === 'tool' && m.is_error === true;

/**
 * A chat body as an OpenAI-compatible upstream takes it (OpenAI refuses fields it does not know): the
 * messages without `tool_media`, and a failed tool result's text prefixed `Error: ` instead of its
 * `is_error` (a chat tool message has no such flag); the body itself when no message has either.
 */
export function openAiToolResults(body: Record<string, unknown>): Record<string, unknown> {
  const messages = body.messages;
  const carries = (m: unknown): m is Record<string, unknown> => isRecord(m) && (TOOL_MEDIA in m || 'is_error' in m);
  if (!Array.isArray(messages) || !messages.some(carries)) return body;
  // rest copies (own data properties), never Object.assign: a caller's JSON may hold an own `__proto__` key
  const plain = messages.map((m) => {
    if (!carries(m)) return m;
    const { [TOOL_MEDIA]: _media, is_error: _error, ...rest } = m; // eslint-disable-line @typescript-eslint/no-unused-vars
    if (isFailedResult(m) && typeof rest.content === 'string') rest.content = `Error: ${rest.content}`;
    return rest;
  });
  const { messages: _old, ...out } = body; // eslint-disable-line @typescript-eslint/no-unused-vars
  out.messages = plain;
  return out;
}
