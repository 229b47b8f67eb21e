import type { CostPrices } from '../../shared/limits/usage-cost';
import { tokenCount } from '../providers/shape';

type Details = { audio_tokens?: unknown } | null | undefined;
type Reported = { prompt_tokens_details?: Details; completion_tokens_details?: Details } | null | undefined;

/**
 * The micro-dollars an answer's audio tokens cost beyond the text price its token counts are billed
 * at, on a step carrying `audioPriceDelta` (a request that asked audio on the platform's credential:
 * shared/catalog/audio-prices.ts). The audio tokens are those the upstream reports within its counts
 * (OpenAI's CompletionUsage: `prompt_tokens_details.audio_tokens`, `completion_tokens_details.audio_tokens`),
 * in the JSON answer's `usage` or the streamed final usage chunk's (`streamed`). 0 without the delta.
 */
export function audioMicros(delta: CostPrices | undefined, response: unknown, streamed: unknown): number {
  if (!delta) return 0;
  const u = ((response as { usage?: Reported } | undefined)?.usage ?? streamed) as Reported;
  if (!u || typeof u !== 'object') return 0;
  const input = tokenCount(u.prompt_tokens_details?.audio_tokens) ?? 0;
  const output = tokenCount(u.completion_tokens_details?.audio_tokens) ?? 0;
  return input * (delta.input_token ?? 0) + output * (delta.output_token ?? 0);
}
