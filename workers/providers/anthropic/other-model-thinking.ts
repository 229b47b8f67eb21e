import { isRecord } from '../../../shared/is-record';
import { CANONICAL_THINKING, withoutThinkingBlocks } from './thinking';

type Message = Record<string, unknown> & { role?: unknown; content?: unknown };

const isThinking = (b: unknown) => isRecord(b) && (b.type === 'thinking' || b.type === 'redacted_thinking');
const answersTools = (m: Message | undefined, operation: string) =>
  operation === 'chat' ? m?.role === 'tool' : m?.role === 'user' && Array.isArray(m.content) && m.content.some((b) => isRecord(b) && b.type === 'tool_result');

/** An assistant message without its signed and redacted thinking (the chat shape's `thinking_blocks`, the Messages shape's blocks); the message itself when it has none. */
function stripped(m: Message, operation: string): Message {
  if (m.role !== 'assistant') return m;
  if (operation === 'chat') return withoutThinkingBlocks(m);
  return Array.isArray(m.content) && m.content.some(isThinking) ? { ...m, content: m.content.filter((b) => !isThinking(b)) } : m;
}

/**
 * A chat job's body (operation `messages` or `chat`) for a fallback model's Claude deployment: the
 * history without the signed and redacted thinking another model made. Anthropic: "When you switch
 * models, for example after a classifier refusal fallback, strip `thinking` and `redacted_thinking`
 * blocks from prior assistant turns. Thinking blocks are tied to the model that produced them."
 * (https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking). When that leaves the
 * final assistant turn of a tool loop (the one the trailing tool results answer) without its
 * thinking, a manual thinking config (`thinking` or `anthropic_thinking` of type `enabled`) is not
 * sent: Anthropic refuses such a turn with thinking enabled ("To avoid this requirement, disable
 * `thinking`") and otherwise disables it itself ("the API automatically disables thinking for that
 * request": extended-thinking, "Graceful thinking degradation"). Adaptive thinking and an effort stay:
 * "In adaptive mode, thinking is optional for the model" (adaptive-thinking), so a turn without it is
 * one the model could have written. The body itself when there is nothing to strip.
 */
export function withoutOtherModelsThinking(operation: string, body: Record<string, unknown>): Record<string, unknown> {
  if ((operation !== 'chat' && operation !== 'messages') || !Array.isArray(body.messages)) return body;
  const messages = body.messages as Message[];
  const out = messages.map((m) => (isRecord(m) ? stripped(m, operation) : m));
  if (out.every((m, i) => m === messages[i])) return body;
  let last = messages.length - 1;
  while (last >= 0 && operation === 'chat' && answersTools(messages[last], operation) && answersTools(messages[last - 1], operation)) last--;
  const final = last - 1;
  const next: Record<string, unknown> = { ...body, messages: out };
  if (final >= 0 && answersTools(messages[last], operation) && out[final] !== messages[final]) {
    for (const k of ['thinking', CANONICAL_THINKING]) if (isRecord(next[k]) && next[k].type === 'enabled') delete next[k];
  }
  return next;
}
