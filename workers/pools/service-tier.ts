import type { ChatJob, RouteStep, UpstreamTarget } from '../../shared/queues/payloads';
import type { CostPrices } from '../../shared/limits/usage-cost';
import { billedTier } from '../../shared/catalog/tier-prices';
import { merged } from '../../shared/merged';

/**
 * The job as a deployment of `step` gets it: a chat request asking an OpenAI service tier (flex,
 * scale, priority, fast) on the platform's credential goes without `service_tier` when the step's
 * model does not price that tier (not in `tierPriceDeltas`, api/dispatch/step-prices.ts): the
 * platform's upstream account would pay the tier's rate while the organization is billed the list
 * price. OpenAI's standard processing serves it, as a request without `service_tier` (`auto`, which
 * uses the project's tier, "default" unless configured: OpenAI's API document, ServiceTier), and the
 * answer's tier stays the one the upstream reports (else `default`, api/routes/chat/service-tier.ts).
 * `auto`, `default`, a caller's own provider key (passthrough) and the messages bypass (Anthropic's
 * `service_tier`) are sent as asked. A request without `service_tier` is returned at once.
 */
export function withTierSent(job: ChatJob, dep: UpstreamTarget, step: RouteStep): ChatJob {
  const asked = job.body.service_tier;
  if (asked === undefined || asked === null || job.operation !== 'chat' || dep.sealedCallerKey) return job;
  const tier = billedTier(asked);
  if (!tier || step.tierPriceDeltas?.[tier]) return job;
  const { service_tier: _unpriced, ...body } = job.body;
  return merged(job, { body });
}

/**
 * The price difference the usage event states (`units.cost_micros`, shared/limits/usage-cost.ts):
 * the tier's when the upstream reports the answer served on a tier the step's model prices
 * (`tierPriceDeltas`), whether the request asked it or not (a request without `service_tier`, or
 * `auto`, is served on the tier the operator's OpenAI project is configured with; `fast` is reported
 * `priority`), else the step's list-price difference (a fallback's, or none): an answer reporting
 * `default`, or no tier, is billed at the list price. OpenAI's answer and each streamed chunk report
 * it (its API document: CreateChatCompletionResponse.service_tier and
 * CreateChatCompletionStreamResponse.service_tier, a ServiceTier: "the response body will include the
 * `service_tier` value based on the processing mode actually used to serve the request").
 */
export function servedDelta(step: RouteStep, servedTier: string | undefined): CostPrices | undefined {
  const deltas = step.tierPriceDeltas;
  // the upstream's word: only a tier the model prices, an own key (never `constructor`)
  const tier = deltas && billedTier(servedTier);
  return tier && Object.hasOwn(deltas!, tier) ? deltas![tier] : step.priceDelta;
}
