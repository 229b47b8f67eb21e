import type { ChatJob, RouteStep, UpstreamTarget } from '../../shared/queues/payloads';
import type { CostPrices } from '../../shared/limits/usage-cost';
import { billedTier } from '../../shared/catalog/tier-prices';
import { merged } from '../../shared/merged';

/**
 * The job with each step's tier prices as this worker reads them (`tierPriceDeltas`). A job an older
 * web pod enqueued during a rolling deploy carries, on a step whose model prices the tier the request
 * asked, that tier's difference alone (`tierPriceDelta`, before commit 46797a4b): it is read as the
 * difference of the tier asked (billedTier of the job's `service_tier`), so the tier is sent
 * (withTierSent) and an answer the upstream reports served on it billed at its price (servedDelta),
 * as the older worker did; an answer served on another tier is billed at the list price, as then. A
 * job asking no priced tier (every job of a current pod's that asks none) is returned at once.
 */
export function withLegacyTierDelta(job: ChatJob): ChatJob {
  const route = job.route;
  const tier = route ? billedTier(job.body.service_tier) : undefined;
  if (!tier || !route!.some(legacyStep)) return job;
  return merged(job, { route: route!.map((s) => (legacyStep(s) ? merged(s, { tierPriceDeltas: { [tier]: s.tierPriceDelta! } }) : s)) });
}

/** A step an older web pod wrote: its tier's difference, without the per-tier ones. */
const legacyStep = (s: RouteStep): boolean => s.tierPriceDelta !== undefined && s.tierPriceDeltas === undefined;

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
