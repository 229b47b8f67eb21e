import type { ApiError } from '../../shared/errors/ApiError';
import type { RouteStep } from '../../shared/queues/payloads';
import { merged } from '../../shared/merged';

/**
 * The workspace a request's handed-out ids were made in (docs/security.md, "Ids the gateway handed
 * out"): the id of the provider whose platform credential the answering deployment called with (a
 * credential is one upstream account: an Anthropic workspace; a provider holds one), and the refusal
 * of the first such id (api/routes/messages/shared-account-ids.ts), answered when no deployment of
 * that provider is in the request's route.
 */
export interface WorkspacePin {
  providerId: string;
  refusal: () => ApiError;
}

/**
 * The route narrowed to the pinned workspace's deployments (api/dispatch/route.ts routeFor): each step
 * keeps only the deployments of that provider, a step left with none is dropped, and with no step left
 * the request is refused as Anthropic refuses an id its workspace does not hold, before a lane, a
 * budget or the upstream is reached. Another workspace would answer 404 (its container, file or thread
 * is not there), so a pool of several workspaces never draws one for such a request. Steps whose
 * deployments are all the workspace's are kept as they are.
 */
export function pinnedRoute(route: RouteStep[], pin: WorkspacePin): RouteStep[] {
  const out: RouteStep[] = [];
  for (const step of route) {
    const deployments = step.deployments.filter((d) => d.providerId === pin.providerId);
    if (deployments.length === step.deployments.length) out.push(step);
    else if (deployments.length) out.push(merged(step, { deployments }));
  }
  if (!out.length) throw pin.refusal();
  return out;
}
