import { isRecord } from '../../../shared/is-record';

/** OpenAI's chat `service_tier` values (its API document's ServiceTier; openai-node 7.60 ChatCompletionCreateParams). */
export const CHAT_SERVICE_TIERS = ['auto', 'default', 'flex', 'scale', 'priority', 'fast'] as const;

/** The tier an answer was served in when its upstream names none: standard processing (as its Responses API reports then, api/dialects/served-tier.ts). */
const SERVED_TIER = 'default';

/** The caller set `service_tier` (null is absent). */
export const askedTier = (body: Record<string, unknown>): boolean => body.service_tier !== undefined && body.service_tier !== null;

/**
 * "When the `service_tier` parameter is set, the response body will include the `service_tier` value
 * based on the processing mode actually used to serve the request" (OpenAI's API document): the
 * upstream's own when it names one (an OpenAI-compatible upstream's echo), else `default`. Translated
 * upstreams (Anthropic, Bedrock, Gemini) answered without it. Set on the answer itself (this
 * request's own, parsed from its reply).
 */
export function withServedTier(answer: unknown): unknown {
  if (isRecord(answer) && (answer.service_tier === undefined || answer.service_tier === null)) answer.service_tier = SERVED_TIER;
  return answer;
}

/** The same for each streamed chunk (OpenAI's chunks carry it on every one): a chunk without it is sent with it. */
export function chunkWithServedTier(data: string): string {
  if (data.includes('"service_tier":"')) return data;
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    return data;
  }
  if (!isRecord(chunk) || chunk.object !== 'chat.completion.chunk') return data;
  return JSON.stringify(withServedTier(chunk));
}
