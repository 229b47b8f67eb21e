/**
 * The tier an OpenAI-compatible upstream reports it served a request on (its chat answer's and
 * chunks' `service_tier`: OpenAI's API document, CreateChatCompletionResponse.service_tier, "the
 * response body will include the `service_tier` value based on the processing mode actually used to
 * serve the request"), as the Responses and Messages dialects report it. The worker bills the answer
 * at that tier's price when the model prices it (workers/pools/service-tier.ts servedDelta), so the
 * caller is told the tier it was served and billed on. An upstream naming none (a translated one:
 * Anthropic, Bedrock, Gemini) leaves each dialect's own standard tier (docs/dialects.md).
 */

/**
 * The tiers a Response reports served (OpenAI's document, test/fixtures/vendor/openai/openapi.json:
 * Response.service_tier, a ServiceTierResponses), `auto` aside: it is what a request asks, never
 * the processing used.
 */
const RESPONSES_SERVED = new Set(['default', 'flex', 'scale', 'priority', 'ultrafast']);

/**
 * A Response's `service_tier`: the upstream's served tier when it is one of OpenAI's (`fast` is
 * reported `priority`, as OpenAI does: "The response will show `service_tier=priority` regardless of
 * if you specify `service_tier=fast` or `priority`", ServiceTier), else `default`.
 */
export function responsesServedTier(served: unknown): string {
  if (served === 'fast') return 'priority';
  return typeof served === 'string' && RESPONSES_SERVED.has(served) ? served : 'default';
}

/** Anthropic's `usage.service_tier` values (SDK `Usage.service_tier: 'standard' | 'priority' | 'batch' | null`; test/fixtures/vendor/anthropic/messages.schema.json). */
export type AnthropicTier = 'standard' | 'priority' | 'batch';

/**
 * A Message's `usage.service_tier` for the OpenAI tier served. Anthropic has three ("Priority Tier",
 * "Standard", "Batch": platform.claude.com/docs/en/api/service-tiers; its usage object "includes the
 * service tier assigned to the request"):
 * - `priority` (and `fast`, reported `priority` by OpenAI), `scale` and `ultrafast` → `priority`:
 *   processing ahead of standard traffic at a premium (OpenAI's Priority processing, "priced at a
 *   premium relative to Standard processing rates", openai.com/api-priority-processing; its Scale
 *   Tier, capacity bought ahead like Anthropic's Priority Tier commitments);
 * - `flex` → `batch`: OpenAI's Flex processing is billed at its Batch API's rates, half the standard
 *   price ("Tokens are priced at Batch API rates", developers.openai.com/api/docs/guides/flex-processing),
 *   as Anthropic's Batch tier is the discounted one; a caller reading `standard` would take it for the
 *   list price;
 * - `default`, and anything else or nothing → `standard`.
 */
export function anthropicServedTier(served: unknown): AnthropicTier {
  switch (served) {
    case 'priority':
    case 'fast':
    case 'scale':
    case 'ultrafast':
      return 'priority';
    case 'flex':
      return 'batch';
    default:
      return 'standard';
  }
}
