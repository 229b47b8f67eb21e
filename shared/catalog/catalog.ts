import { Model, Provider, TokenizerProfile } from '../db/models';
import type { Capabilities } from '../db/models/Model';
import type { ProviderKind, ProviderSettings } from '../db/models/Provider';
import { poolOfOne } from './deployments';
import { passthroughAllowed } from './passthrough';
import { inlineImageUrlsDefault } from './inline-images';
import { splitPrices } from './tier-prices';
import type { CostPrices } from '../limits/usage-cost';

export const BACKGROUND_SUFFIX = '-background';

/** The id a `-background` id is the variant of (itself when it has no suffix). */
export const backgroundBase = (id: string): string => (id.endsWith(BACKGROUND_SUFFIX) ? id.slice(0, -BACKGROUND_SUFFIX.length) : id);

export interface CatalogModel {
  id: string;
  publicId: string;
  displayName: string | null;
  upstreamName: string;
  capabilities: Capabilities;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  limits: Record<string, unknown>;
  config: Record<string, unknown>;
  /** The list prices: micro-dollars per unit. */
  prices: Record<string, number>;
  /** Per OpenAI service tier (flex, scale, priority), the token prices a request served on it is billed at (tier-prices.ts); absent when none is priced. */
  tierPrices?: Record<string, CostPrices>;
  tokenizer: string;
  createdAt: Date;
  provider: CatalogProvider;
  /** The pool: one deployment at least (a model with only provider + upstream is a pool of one). */
  deployments: CatalogDeployment[];
  /** Public ids of fallback models, in order. */
  fallbacks: string[];
}

export interface CatalogProvider {
  id: string;
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  settings: ProviderSettings;
  /** Callers may bring their own key to it (passthrough; shared/catalog/passthrough.ts). */
  passthrough: boolean;
}

export interface CatalogDeployment {
  name: string;
  provider: CatalogProvider;
  upstream: string;
  weight: number;
  priority: number;
  rpm: number | null;
  tpm: number | null;
  maxConcurrency: number | null;
  /** The foundation model a Bedrock `upstream` serves when the id does not name it (DeploymentSpec.base_model). */
  baseModel?: string;
  /** The gateway inlines image URLs for it (DeploymentSpec.inline_image_urls, else its provider's default). */
  inlineImageUrls?: boolean;
}

/** The id that names a deployment's model (a bedrock one's base model, else its upstream): what a family's request form is read from. */
export const modelIdOf = (d: CatalogDeployment): string => (d.provider.kind === 'bedrock' && d.baseModel) || d.upstream;

/** The deployments of a model row, providers resolved by name; unknown providers are left out. */
export function deploymentsOf(m: Model, primary: CatalogProvider, byName: Map<string, CatalogProvider>): CatalogDeployment[] {
  const specs = m.deployments?.length ? m.deployments : poolOfOne(primary.name, m.upstreamName);
  const out: CatalogDeployment[] = [];
  for (const d of specs) {
    const provider = byName.get(d.provider);
    if (!provider) continue;
    out.push({
      name: d.name,
      provider,
      upstream: d.upstream,
      weight: d.weight ?? 1,
      priority: d.priority ?? 0,
      rpm: d.rpm ?? null,
      tpm: d.tpm ?? null,
      maxConcurrency: d.max_concurrency ?? null,
      inlineImageUrls: d.inline_image_urls ?? inlineImageUrlsDefault(provider),
      ...(d.base_model ? { baseModel: d.base_model } : {}),
    });
  }
  return out.length ? out : [{ name: primary.name, provider: primary, upstream: m.upstreamName, weight: 1, priority: 0, rpm: null, tpm: null, maxConcurrency: null, inlineImageUrls: inlineImageUrlsDefault(primary) }];
}

export interface ResolvedModel {
  model: CatalogModel;
  /** The id exactly as the caller sent it (reported back in responses). */
  requestedId: string;
  /** The caller asked for background work with the `-background` suffix. */
  background: boolean;
}

/**
 * The model catalog, loaded whole into memory (it is small) and dropped when the cache epoch moves.
 * Global: every authenticated caller sees the same entries.
 */
export class Catalog {
  private loading: Promise<Map<string, CatalogModel>> | undefined;

  invalidate(): void {
    this.loading = undefined;
  }

  private load(): Promise<Map<string, CatalogModel>> {
    if (!this.loading) {
      this.loading = (async () => {
        const [models, providers, profiles] = await Promise.all([
          Model.findAll({ where: { enabled: true }, order: [['publicId', 'ASC']] }),
          Provider.findAll(),
          TokenizerProfile.findAll(),
        ]);
        // A model's `tokenizer` names a tokenizer profile (resolved to its encoding here) or an encoding.
        const encodingOf = new Map(profiles.map((t) => [t.name, t.encoding]));
        const byId = new Map(providers.map((p) => [p.id, { id: p.id, name: p.name, kind: p.kind, baseUrl: p.baseUrl, settings: p.settings ?? {}, passthrough: passthroughAllowed(p) }]));
        const byName = new Map([...byId.values()].map((p) => [p.name, p]));
        const map = new Map<string, CatalogModel>();
        for (const m of models) {
          const p = byId.get(m.providerId);
          if (!p) continue;
          const { prices, tierPrices } = splitPrices(m.prices);
          map.set(m.publicId, {
            id: m.id,
            publicId: m.publicId,
            displayName: m.displayName,
            upstreamName: m.upstreamName,
            capabilities: m.capabilities,
            contextWindow: m.contextWindow,
            maxOutputTokens: m.maxOutputTokens,
            limits: m.limits,
            config: m.config,
            prices,
            tierPrices,
            tokenizer: encodingOf.get(m.tokenizer) ?? m.tokenizer,
            createdAt: m.createdAt,
            provider: p,
            deployments: deploymentsOf(m, p, byName),
            fallbacks: m.fallbacks ?? [],
          });
        }
        return map;
      })();
      this.loading.catch(() => (this.loading = undefined));
    }
    return this.loading;
  }

  async list(): Promise<CatalogModel[]> {
    return [...(await this.load()).values()];
  }

  async get(publicId: string): Promise<CatalogModel | undefined> {
    return (await this.load()).get(publicId);
  }

  /** Resolves a requested id, stripping the `-background` suffix when the base id exists. */
  async resolve(requestedId: string): Promise<ResolvedModel | undefined> {
    const map = await this.load();
    const direct = map.get(requestedId);
    if (direct) return { model: direct, requestedId, background: false };
    if (requestedId.endsWith(BACKGROUND_SUFFIX)) {
      const base = map.get(requestedId.slice(0, -BACKGROUND_SUFFIX.length));
      if (base) return { model: base, requestedId, background: true };
    }
    return undefined;
  }
}
