import { tokenCount } from '../providers/shape';

type Detail = { cached_tokens?: number; reasoning_tokens?: number };
type ReportedUsage = { prompt_tokens_details?: Detail; completion_tokens_details?: Detail; input_tokens_details?: Detail; output_tokens_details?: Detail; cache_read_input_tokens?: number };

/**
 * Cached input and reasoning tokens as an upstream's answer reports them (chat, responses or messages
 * shape), for the request log: a chat job's (chat.worker.ts) and a decision job's (systemone.worker.ts).
 * A count that is not one (fractional, negative: shape.ts tokenCount) is left out: the log row could
 * not be stored, and the drainer's failed batch dead-lettered the request's usage event with it.
 */
export function detailTokens(response: unknown): { cachedTokens?: number; reasoningTokens?: number } {
  const u = (response as { usage?: ReportedUsage } | undefined)?.usage;
  if (!u || typeof u !== 'object') return {};
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.input_tokens_details?.cached_tokens ?? u.cache_read_input_tokens;
  const reasoning = u.completion_tokens_details?.reasoning_tokens ?? u.output_tokens_details?.reasoning_tokens;
  const c = tokenCount(cached);
  const r = tokenCount(reasoning);
  return { ...(c !== undefined ? { cachedTokens: c } : {}), ...(r !== undefined ? { reasoningTokens: r } : {}) };
}
