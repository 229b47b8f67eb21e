import type { CostPrices } from '../../shared/limits/usage-cost';
import type { RouteStep } from '../../shared/queues/payloads';
import type { TokenUsage } from '../providers/types';
import { isRecord } from '../../shared/is-record';
import { tokenCount } from '../providers/shape';

type Reported = { prompt_tokens_details?: unknown; completion_tokens_details?: unknown } | null | undefined;

/**
 * The micro-dollars an answer's audio tokens cost beyond the text price its token counts were billed
 * at, on a step carrying `audioPriceDelta` (a request that asked audio on the platform's credential:
 * shared/catalog/audio-prices.ts); 0 without it. `billed` is the difference the counts were billed
 * at (service-tier.ts servedDelta: a priced tier's when served on it, else the step's list-price
 * difference). The step's audio difference is to its model's list text price; an answer served on a
 * priced tier had its audio tokens, counted among the others, billed at the tier's text price, so
 * the tier's own difference to the list price is taken off (tiers price text tokens only,
 * docs/catalog.md "Service tiers"): audio tokens cost exactly the audio price, whatever the tier.
 *
 * The audio tokens of each side asked are those the upstream reports within its counts (OpenAI's
 * CompletionUsage: `prompt_tokens_details.audio_tokens`, `completion_tokens_details.audio_tokens`, 0
 * when absent, its schema's default) in the JSON answer's `usage` or the streamed final usage
 * chunk's (`streamed`). An upstream that reports no usage at all is billed by the gateway's estimate
 * (openai/usage-estimate.ts), which states its audio tokens in those same details: an `input_audio`
 * clip's and an answer's audio by their duration at OpenAI's audio rates, a transcript and the rest
 * as text, so each is billed at its own price. An upstream that reports counts without such details,
 * or a count that is not one, is taken to have spent every token of that side (`counted`) on audio:
 * never below what the platform's upstream account may have paid (docs/catalog.md "Audio tokens").
 */
export function audioMicros(step: RouteStep, billed: CostPrices | undefined, counted: TokenUsage, response: unknown, streamed: unknown): number {
  const delta = step.audioPriceDelta;
  if (!delta) return 0;
  const u = ((response as { usage?: Reported } | undefined)?.usage ?? streamed) as Reported;
  const reported = isRecord(u) ? u : undefined;
  // the tier's text price minus the list price: 0 when billed at the list price (`billed` is then the step's priceDelta)
  const tierOver = (k: keyof CostPrices) => (billed?.[k] ?? 0) - (step.priceDelta?.[k] ?? 0);
  let micros = 0;
  if (delta.input_token !== undefined) micros += audioTokens(reported?.prompt_tokens_details, counted.inputTokens) * (delta.input_token - tierOver('input_token'));
  if (delta.output_token !== undefined) micros += audioTokens(reported?.completion_tokens_details, counted.outputTokens) * (delta.output_token - tierOver('output_token'));
  return micros;
}

/** A side's audio tokens as its reported details state them; all of `all` when there are no details, or their count is not one. */
function audioTokens(details: unknown, all: number): number {
  if (!isRecord(details)) return all;
  const n = details.audio_tokens;
  return n === undefined || n === null ? 0 : tokenCount(n) ?? all;
}
