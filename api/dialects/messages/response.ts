import crypto from 'crypto';
import { parseArguments, type CanonicalCompletion, type CanonicalUsage, type FinishReason } from '../canonical';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export function messageId(): string {
  return `msg_${crypto.randomBytes(12).toString('hex')}`;
}

/**
 * finish_reason → stop_reason. OpenAI reports a matched stop sequence as `stop` too, so it is
 * `end_turn`; an answer that carried a refusal (`refused`) and ended on its own is `refusal`.
 */
export function stopReason(finish: FinishReason | undefined, refused = false): StopReason {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return refused ? 'refusal' : 'end_turn';
  }
}

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** Anthropic counts cached input apart from `input_tokens`; OpenAI includes it in prompt_tokens. */
export function messagesUsage(u: CanonicalUsage | undefined | null): MessagesUsage {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - cached),
    output_tokens: u?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

/**
 * Canonical chat completion → Anthropic Message, reporting the public model id. An OpenAI refusal
 * (`message.refusal`) is a text block with its text, and stop_reason `refusal` (Anthropic's own for
 * a declined request).
 */
export function canonicalToMessage(c: CanonicalCompletion, publicModel: string, id = messageId()): Record<string, unknown> {
  const choice = c.choices[0];
  const msg = choice?.message ?? {};
  const content: Array<Record<string, unknown>> = [];
  if (msg.reasoning_content) content.push({ type: 'thinking', thinking: msg.reasoning_content, signature: '' });
  const text = (msg.content ?? '') + (msg.refusal ?? '');
  if (text) content.push({ type: 'text', text });
  for (const call of msg.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseArguments(call.function.arguments) });
  }
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: publicModel,
    content,
    stop_reason: stopReason(choice?.finish_reason, !!msg.refusal),
    stop_sequence: null,
    usage: messagesUsage(c.usage),
  };
}
