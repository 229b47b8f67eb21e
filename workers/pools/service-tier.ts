import type { ChatJob, RouteStep, UpstreamTarget } from '../../shared/queues/payloads';
import type { CostPrices } from '../../shared/limits/usage-cost';
import { billedTier } from '../../shared/catalog/tier-prices';
import { merged } from '../../shared/merged';

/**
 * The job as a deployment of `step` gets it: a chat request asking an OpenAI service tier (flex,
 * scale, priority, fast) on the platform's credential goes without `service_tier` when the step's
 * model does not price that tier (no `tierPriceDelta`, api/dispatch/step-prices.ts): the
 * platform's upstream account would pay the tier's rate while the organization is billed the list
 * price. OpenAI's standard processing serves it, as a request without `service_tier` (`auto`, which
 * uses the project's tier, "default" unless configured: OpenAI's API document, ServiceTier), and the
 * answer's tier stays the one the upstream reports (else `default`, api/routes/chat/service-tier.ts).
 * `auto`, `default`, a caller's own provider key (passthrough) and the messages bypass (Anthropic's
 * `service_tier`) are sent as asked. A request without `service_tier` is returned at once.
 */
export function withTierSent(job: ChatJob, dep: UpstreamTarget, step: RouteStep): ChatJob {
  const asked = job.body.service_tier;
  if (asked === undefined || asked === null || job.operation !== 'chat' || dep.sealedCallerKey || step.tierPriceDelta || !billedTier(asked)) return job;
  const { service_tier: _unpriced, ...body } = job.body;
  return merged(job, { body });
}

/**
 * The price difference the usage event states (`units.cost_micros`, shared/limits/usage-cost.ts):
 * the tier's when the upstream reports it served the request on the priced tier it asked (`fast` is
 * reported `priority`), else the step's list-price difference (a fallback's, or none). An answer
 * reporting `default` for an asked `priority` is billed at the list price.
 */
export function servedDelta(job: ChatJob, step: RouteStep, servedTier: string | undefined): CostPrices | undefined {
  if (step.tierPriceDelta && servedTier !== undefined && servedTier === billedTier(job.body.service_tier)) return step.tierPriceDelta;
  return step.priceDelta;
}
