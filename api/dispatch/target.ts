import type { UpstreamTarget } from '../../shared/queues/payloads';
import type { CatalogModel } from '../../shared/catalog/catalog';

/** Where a job for the model goes: its provider and the upstream's own name for it. */
export function targetOf(m: CatalogModel): UpstreamTarget {
  return { providerId: m.provider.id, kind: m.provider.kind, baseUrl: m.provider.baseUrl, settings: m.provider.settings, upstreamModel: m.upstreamName, tokenizer: m.tokenizer, inlineImageUrls: m.deployments[0]?.inlineImageUrls ?? false };
}
