import type { ContentBlock, ConverseCommandOutput, TokenUsage } from '@aws-sdk/client-bedrock-runtime';
import { thinkingBlocksOf } from './reasoning';
import { tokenCount } from '../shape';

/** Converse stopReason → finish_reason. */
export function finishReason(stop: string | undefined): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop'; // end_turn, stop_sequence, malformed_model_output, malformed_tool_use
  }
}

/**
 * Converse usage → OpenAI usage. Bedrock reports cache reads and writes apart from inputTokens (as
 * Anthropic does); in OpenAI's shape they are part of prompt_tokens, the reads also as cached_tokens
 * and the writes, when there are any, as cache_write_tokens.
 */
export function chatUsage(u: Partial<TokenUsage> | undefined) {
  // the SDK reads numbers, not their range: a negative count is none (shape.ts tokenCount)
  const cached = tokenCount(u?.cacheReadInputTokens) ?? 0;
  const written = tokenCount(u?.cacheWriteInputTokens) ?? 0;
  const prompt = (tokenCount(u?.inputTokens) ?? 0) + cached + written;
  const completion = tokenCount(u?.outputTokens) ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: written ? { cached_tokens: cached, cache_write_tokens: written } : { cached_tokens: cached } };
}

/**
 * The choice's `stop_reason` as vLLM names it (the matched stop sequence) when Converse stopped on one
 * (`stopReason: "stop_sequence"`): the sequence Claude reports in `additionalModelResponseFields`
 * (asked for by to-converse.ts, `/stop_sequence`), else the request's only stop sequence, the one that
 * must have matched. Chat's finish_reason is only `stop`; the messages dialect reads the sequence
 * here (api/dialects/messages/response.ts matchedStop) and answers `stop_sequence` as Anthropic does.
 * With several sequences and none reported, nothing (the answer is `end_turn`, as on OpenAI). A
 * `model_context_window_exceeded` (chat's `length`) is named as the choice's `native_finish_reason`, as
 * the Anthropic adapter names it (anthropic/from-messages.ts matchedStopOf).
 */
export function matchedStopOf(stopReason: string | undefined, fields: unknown, stops: string[]): { stop_reason?: string; native_finish_reason?: string } {
  if (stopReason === 'model_context_window_exceeded') return { native_finish_reason: stopReason };
  if (stopReason !== 'stop_sequence') return {};
  const reported = (fields as { stop_sequence?: unknown } | null | undefined)?.stop_sequence;
  if (typeof reported === 'string' && stops.includes(reported)) return { stop_reason: reported };
  return stops.length === 1 ? { stop_reason: stops[0] } : {};
}

export function completionId(requestId: string | undefined): string {
  return `chatcmpl-${requestId ?? Date.now().toString(36)}`;
}

/**
 * A Converse answer → a canonical chat completion with the public model id. Reasoning text is
 * `reasoning_content`; signed and redacted reasoning blocks are also `thinking_blocks` (reasoning.ts).
 * `stops`: the request's stop sequences (matchedStopOf).
 */
export function converseToCompletion(res: ConverseCommandOutput, publicModel: string, stops: string[] = []): Record<string, unknown> {
  const blocks: ContentBlock[] = res.output?.message?.content ?? [];
  const text = blocks.map((b) => b.text ?? '').join('');
  const reasoning = blocks.map((b) => b.reasoningContent?.reasoningText?.text ?? '').join('');
  const calls = blocks
    .filter((b) => b.toolUse)
    .map((b) => ({ id: String(b.toolUse!.toolUseId), type: 'function', function: { name: String(b.toolUse!.name), arguments: JSON.stringify(b.toolUse!.input ?? {}) } }));
  const message: Record<string, unknown> = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (reasoning) message.reasoning_content = reasoning;
  const signed = thinkingBlocksOf(blocks);
  if (signed.length) message.thinking_blocks = signed;
  if (calls.length) message.tool_calls = calls;
  return {
    id: completionId(res.$metadata?.requestId),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: publicModel,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(res.stopReason), ...matchedStopOf(res.stopReason, res.additionalModelResponseFields, stops) }],
    usage: chatUsage(res.usage),
  };
}
