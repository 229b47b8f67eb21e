import { thinkingBlocksOf } from './thinking';
import { tokenCount } from '../shape';
import { isRecord } from '../../../shared/is-record';

type Block = Record<string, unknown> & { type: string };
type Usage = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** SDK 1.16 OutputTokensDetails: the thinking tokens among `output_tokens`. */
  output_tokens_details?: { thinking_tokens?: number | null } | null;
};

/** stop_reason → finish_reason. */
export function finishReason(stop: unknown): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop'; // end_turn, stop_sequence, pause_turn
  }
}

/**
 * The choice's `stop_reason` as vLLM names it, the stop sequence that ended the answer, when Anthropic
 * said one did (`stop_reason: "stop_sequence"` and its `stop_sequence`); chat's finish_reason is only
 * `stop`, so the messages dialect reads the matched sequence from here (api/dialects/messages/response.ts
 * matchedStop) and answers `stop_sequence` as Anthropic did. A `model_context_window_exceeded` (chat's
 * `length`, as `max_tokens` is) is named as the choice's `native_finish_reason` (OpenRouter's field for
 * the upstream's own stop reason), which the messages dialect answers as that stop reason.
 */
export function matchedStopOf(stopReason: unknown, stopSequence: unknown): { stop_reason?: string; native_finish_reason?: string } {
  if (stopReason === 'model_context_window_exceeded') return { native_finish_reason: stopReason };
  return stopReason === 'stop_sequence' && typeof stopSequence === 'string' ? { stop_reason: stopSequence } : {};
}

/**
 * A refusal's `stop_details` as Anthropic gave it (SDK 1.16 RefusalStopDetails: `type` refusal, its
 * `category` and `explanation`, each a string or null), on the choice beside finish_reason
 * `content_filter`, which has no room for them: the messages dialect answers them as they came
 * (api/dialects/messages/response.ts refusalDetails). Anything else is none.
 */
export function refusalDetailsOf(stopReason: unknown, details: unknown): { stop_details?: { type: 'refusal'; category: string | null; explanation: string | null } } {
  if (stopReason !== 'refusal' || !isRecord(details) || details.type !== 'refusal') return {};
  const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
  return { stop_details: { type: 'refusal', category: text(details.category), explanation: text(details.explanation) } };
}

/**
 * Anthropic usage → OpenAI usage: cached input (read or written) is part of prompt_tokens there, the
 * reads also `cached_tokens` and the writes, when there are any, `cache_write_tokens`; thinking tokens
 * (already within `output_tokens`, as reasoning tokens are within completion_tokens) are reported as
 * `completion_tokens_details.reasoning_tokens` when the upstream counted them.
 */
export function chatUsage(u: Usage | undefined) {
  // a count that is not one (a string, negative, NaN-ish) is none (shape.ts tokenCount)
  const cached = tokenCount(u?.cache_read_input_tokens) ?? 0;
  const written = tokenCount(u?.cache_creation_input_tokens) ?? 0;
  const prompt = (tokenCount(u?.input_tokens) ?? 0) + cached + written;
  const completion = tokenCount(u?.output_tokens) ?? 0;
  const thinking = u?.output_tokens_details?.thinking_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    // the cache writes as OpenAI's CompletionUsage names them (the Responses API's input_tokens_details.cache_write_tokens)
    prompt_tokens_details: written ? { cached_tokens: cached, cache_write_tokens: written } : { cached_tokens: cached },
    ...(typeof thinking === 'number' ? { completion_tokens_details: { reasoning_tokens: thinking } } : {}),
  };
}

/**
 * An Anthropic Message → a canonical chat completion with the public model id: the thinking text is
 * `reasoning_content`, the signed thinking and redacted thinking blocks themselves `thinking_blocks`.
 */
export function messageToCompletion(msg: Record<string, unknown>, publicModel: string): Record<string, unknown> {
  const blocks = (msg.content as Block[]) ?? [];
  const text = blocks.filter((b) => b.type === 'text').map((b) => String(b.text)).join('');
  const reasoning = blocks.filter((b) => b.type === 'thinking').map((b) => String(b.thinking)).join('');
  const calls = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: String(b.id), type: 'function', function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) } }));
  const message: Record<string, unknown> = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (reasoning) message.reasoning_content = reasoning;
  const signed = thinkingBlocksOf(blocks);
  if (signed.length) message.thinking_blocks = signed;
  if (calls.length) message.tool_calls = calls;
  return {
    id: `chatcmpl-${String(msg.id ?? '')}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: publicModel,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(msg.stop_reason), ...matchedStopOf(msg.stop_reason, msg.stop_sequence), ...refusalDetailsOf(msg.stop_reason, msg.stop_details) }],
    usage: chatUsage(msg.usage as Usage),
  };
}
