import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';

/**
 * An Anthropic thinking block with its signature, or a redacted one (the SDK's ThinkingBlock and
 * RedactedThinkingBlock): opaque, sent back unchanged to a Claude upstream, which refuses a
 * tool-using conversation with thinking on without them: an Anthropic-native one as it is, a Claude
 * model on Bedrock as `reasoningContent` (Anthropic documents the signatures as portable across its
 * API and Bedrock, so either may answer the next turn: docs/routing.md); never sent to another
 * upstream. On a canonical (chat) assistant message it is LiteLLM's `thinking_blocks` (docs/dialects.md).
 */
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

/** A ThinkingBlock of the documented shape: a thinking block with a non-empty signature, or a redacted one with its data. */
export function isThinkingBlock(v: unknown): v is ThinkingBlock {
  const b = v as Record<string, unknown> | null;
  if (!b || typeof b !== 'object') return false;
  if (b.type === 'thinking') return typeof b.thinking === 'string' && typeof b.signature === 'string' && b.signature !== '';
  return b.type === 'redacted_thinking' && typeof b.data === 'string' && b.data !== '';
}

/** Only the block's own fields (a block as Anthropic sent it may carry others, e.g. `citations: null`). */
export function thinkingBlock(b: ThinkingBlock): ThinkingBlock {
  return b.type === 'thinking' ? { type: 'thinking', thinking: b.thinking, signature: b.signature } : { type: 'redacted_thinking', data: b.data };
}

/** The signed and redacted thinking blocks among an Anthropic message's content, in order. */
export function thinkingBlocksOf(content: Array<Record<string, unknown>>): ThinkingBlock[] {
  return content.filter(isThinkingBlock).map(thinkingBlock);
}

/**
 * A chat message's `thinking_blocks`, checked: an array of signed thinking or redacted thinking
 * blocks, else 400 naming the message's field (`at`: the message's index).
 */
export function checkedThinkingBlocks(v: unknown, at: number): ThinkingBlock[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every(isThinkingBlock)) {
    throw new ApiError(400, 'invalid_request', `messages[${at}].thinking_blocks must be a list of {type: "thinking", thinking, signature} and {type: "redacted_thinking", data} blocks as the model returned them.`, {
      param: `messages[${at}].thinking_blocks`,
    });
  }
  return v.map(thinkingBlock);
}

/** Every message's `thinking_blocks` checked (checkedThinkingBlocks): the adapters' refusal of malformed ones, before anything is sent. */
export function refuseMalformedThinking(body: Record<string, unknown>): void {
  if (Array.isArray(body.messages)) (body.messages as Array<{ thinking_blocks?: unknown } | null>).forEach((m, i) => void checkedThinkingBlocks(m?.thinking_blocks, i));
}

/**
 * The canonical request's `anthropic_thinking`: the messages dialect's `thinking` (Anthropic's
 * ThinkingConfigParam: `{type: "enabled", budget_tokens}`, `{type: "adaptive"}`, `{type: "disabled"}`,
 * with `display`), carried as the caller wrote it for whichever deployment is picked. An
 * Anthropic-native upstream gets it as `thinking`, a Bedrock Claude model as
 * `additionalModelRequestFields.thinking`; no other upstream is sent it.
 */
export const CANONICAL_THINKING = 'anthropic_thinking';

/** A chat message without its `thinking_blocks`; the message itself when it has none. */
export function withoutThinkingBlocks<M extends Record<string, unknown>>(m: M): Record<string, unknown> {
  if (!('thinking_blocks' in m)) return m;
  const { thinking_blocks: _dropped, ...rest } = m; // eslint-disable-line @typescript-eslint/no-unused-vars
  return rest;
}

/**
 * A chat body for an OpenAI-compatible (or Azure) upstream: assistant messages without their
 * `thinking_blocks` (Anthropic's signatures mean nothing there), and without the messages dialect's
 * `thinking` (CANONICAL_THINKING). The body itself when it has neither.
 */
export function withoutAnthropicThinking(body: Record<string, unknown>): Record<string, unknown> {
  if (CANONICAL_THINKING in body) {
    const { [CANONICAL_THINKING]: _dropped, ...rest } = body; // eslint-disable-line @typescript-eslint/no-unused-vars
    body = rest;
  }
  const messages = body.messages;
  const carries = (m: unknown): m is Record<string, unknown> => isRecord(m) && 'thinking_blocks' in m;
  if (!Array.isArray(messages) || !messages.some(carries)) return body;
  return { ...body, messages: messages.map((m) => (carries(m) ? withoutThinkingBlocks(m) : m)) };
}
