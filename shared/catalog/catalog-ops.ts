import type { RedisClient } from '../redis/connection';
import Joi from 'joi';
import { Model, Provider, TokenizerProfile } from '../db/models';
import { PROVIDER_KINDS, type ProviderKind, type ProviderSettings } from '../db/models/Provider';
import { PRESET_NAMES, PRESETS_WITH_URL, presetOf } from './presets';
import { decrypt, encrypt } from '../crypto';
import { bumpEpoch } from '../cache/epoch';
import { baseModelMisfits, deploymentsSchema, fallbacksSchema, poolOfOne, type DeploymentSpec } from './deployments';
import { decisionPoolMisfits, decisionUsersRefusing } from './decision-providers';
import { withBaseModels } from './base-models';
import { pricesSchema, type StoredPrices } from './tier-prices';
import { askProfilesAgain, profileAccessChanged } from './provider-base-models';
import { MAX_IMAGE_TOKENS } from '../tokenizer/media';

/** Operator actions on providers and catalog entries (CLI and catalog files). */

export const providerSchema = Joi.object({
  name: Joi.string().pattern(/^[a-z0-9][a-z0-9_-]*$/).required(),
  kind: Joi.string().valid(...PROVIDER_KINDS).required(),
  // A preset that knows its service's URL fills it in (shared/catalog/presets.ts); bedrock defaults to
  // the region's endpoint (docs/providers/bedrock.md).
  base_url: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .when('kind', { is: 'bedrock', then: Joi.optional(), otherwise: Joi.when('preset', { is: Joi.valid(...PRESETS_WITH_URL).required(), then: Joi.optional(), otherwise: Joi.required() }) }),
  api_key: Joi.string().min(1),
  api_version: Joi.string().max(100).when('kind', { is: 'azure', then: Joi.required() }),
  region: Joi.string().pattern(/^[a-z0-9-]+$/).max(40).when('kind', { is: 'bedrock', then: Joi.required() }),
  preset: Joi.string().valid(...PRESET_NAMES).when('kind', { is: 'openai', otherwise: Joi.forbidden() }),
  // whether callers may bring their own key (omitted: allowed only on a vendor's own https host, shared/catalog/passthrough.ts)
  passthrough: Joi.boolean(),
});

export const modelSchema = Joi.object({
  id: Joi.string().pattern(/^[A-Za-z0-9._:/-]+$/).required(),
  // Either one provider + upstream (a pool of one) or a pool of deployments.
  provider: Joi.string(),
  upstream: Joi.string(),
  deployments: deploymentsSchema,
  fallbacks: fallbacksSchema,
  display_name: Joi.string(),
  capabilities: Joi.object().pattern(/^(chat|embeddings|rerank|image_generation|transcription|vision|decision|tools|json_schema)$/, Joi.boolean()).required(),
  context_window: Joi.number().integer().min(1),
  max_output_tokens: Joi.number().integer().min(1),
  limits: Joi.object({ image_tokens: Joi.number().integer().min(1).max(MAX_IMAGE_TOKENS) }).unknown(true),
  // `reasoning_effort`: false (none) or the levels the upstream takes (shared/catalog/effort-levels.ts)
  config: Joi.object({ reasoning_effort: Joi.alternatives(Joi.boolean(), Joi.array().items(Joi.string().min(1))) }).unknown(true),
  prices: pricesSchema(/.*/),
  // an encoding or a tokenizer profile's name (checked against the profiles on import)
  tokenizer: Joi.string().pattern(/^[a-z0-9][a-z0-9_-]{0,62}$/),
  enabled: Joi.boolean(),
})
  .xor('provider', 'deployments')
  .with('provider', 'upstream')
  .without('deployments', 'upstream');

export const catalogFileSchema = Joi.object({
  providers: Joi.array().items(providerSchema).default([]),
  models: Joi.array().items(modelSchema).default([]),
});

export type ProviderInput = { name: string; kind: ProviderKind; base_url?: string; api_key?: string; passthrough?: boolean } & ProviderSettings;

/** The non-secret per-kind fields of a provider entry. */
export function providerSettings(p: ProviderSettings): ProviderSettings {
  const s: ProviderSettings = {};
  if (p.api_version !== undefined) s.api_version = p.api_version;
  if (p.region !== undefined) s.region = p.region;
  if (p.preset !== undefined) s.preset = p.preset;
  return s;
}
export type ModelInput = {
  id: string;
  provider?: string;
  upstream?: string;
  deployments?: DeploymentSpec[];
  fallbacks?: string[];
  display_name?: string;
  capabilities: Record<string, boolean>;
  context_window?: number;
  max_output_tokens?: number;
  limits?: Record<string, unknown>;
  config?: Record<string, unknown>;
  /** Micro-dollars per unit, and `service_tiers` (tier-prices.ts). */
  prices?: StoredPrices;
  tokenizer?: string;
  enabled?: boolean;
};

/**
 * Creates or updates a provider by name; the key is stored encrypted and never read back.
 * `accessChanged`: a bedrock provider's key, region or base_url changed (provider-base-models.ts).
 */
export async function upsertProvider(p: ProviderInput): Promise<{ provider: Provider; accessChanged: boolean }> {
  const baseUrl = p.base_url ?? presetOf(p.preset)?.baseUrl ?? (p.kind === 'bedrock' ? '' : undefined);
  if (baseUrl === undefined) throw new Error(`provider '${p.name}' needs a base_url`);
  const values = { name: p.name, kind: p.kind, baseUrl, settings: providerSettings(p), passthrough: p.passthrough ?? null, ...(p.api_key ? { apiKeyEncrypted: encrypt(p.api_key) } : {}) };
  const existing = await Provider.findOne({ where: { name: p.name } });
  const refusing = existing && (await decisionUsersRefusing(p.name, values));
  if (refusing) throw new Error(`provider '${p.name}' serves decision models (${refusing.models.join(', ')}): ${refusing.misfit}`);
  const newKey = p.api_key !== undefined && !(existing?.apiKeyEncrypted && decrypt(existing.apiKeyEncrypted) === p.api_key);
  const accessChanged = profileAccessChanged(existing?.get({ plain: true }), values, newKey);
  const provider = existing ? await existing.update(values) : await Provider.create({ apiKeyEncrypted: null, ...values });
  return { provider, accessChanged };
}

export const ENCODINGS = ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'];

/** A model's tokenizer is an encoding or the name of a tokenizer profile. */
export async function checkTokenizer(name: string): Promise<void> {
  if (ENCODINGS.includes(name) || (await TokenizerProfile.findOne({ where: { name } }))) return;
  throw new UnknownTokenizer(name);
}

export class UnknownTokenizer extends Error {
  constructor(readonly tokenizer: string) {
    super(`unknown tokenizer '${tokenizer}': an encoding (${ENCODINGS.join(', ')}) or a tokenizer profile's name`);
  }
}

/**
 * Creates or updates a catalog entry by public id. A bedrock deployment on an application inference
 * profile without `base_model` gets it from AWS (base-models.ts); `warnings` say where AWS did not tell.
 */
export async function upsertModel(m: ModelInput): Promise<{ model: Model; warnings: string[] }> {
  const written = m.deployments ?? poolOfOne(m.provider!, m.upstream!);
  const providers = await Provider.findAll({ where: { name: written.map((d) => d.provider) } });
  const kindOf = (n: string) => providers.find((p) => p.name === n)?.kind;
  for (const d of written) if (!kindOf(d.provider)) throw new Error(`unknown provider '${d.provider}'`);
  const misnamed = baseModelMisfits(written, kindOf);
  if (misnamed.length) throw new Error(`model '${m.id}': base_model is read on bedrock deployments only (${misnamed.join(', ')})`);
  if (m.tokenizer) await checkTokenizer(m.tokenizer);
  const misfits = m.capabilities.decision ? await decisionPoolMisfits(written) : [];
  if (misfits.length) throw new Error(`model '${m.id}' is a decision model: ${misfits.join('; ')}`);
  const { deployments, warnings } = await withBaseModels(written, providers);
  // The first deployment is the model's primary provider and upstream (what non-chat pools call).
  const provider = providers.find((p) => p.name === deployments[0].provider)!;
  const values = {
    publicId: m.id,
    providerId: provider.id,
    upstreamName: deployments[0].upstream,
    deployments,
    fallbacks: m.fallbacks ?? [],
    displayName: m.display_name ?? null,
    capabilities: m.capabilities,
    contextWindow: m.context_window ?? null,
    maxOutputTokens: m.max_output_tokens ?? null,
    limits: m.limits ?? {},
    config: m.config ?? {},
    // `service_tiers` nests an object: every reader of a unit's price takes the list prices of tier-prices.ts splitPrices
    prices: m.prices ?? {},
    tokenizer: m.tokenizer ?? 'o200k_base',
    enabled: m.enabled ?? true,
  };
  const existing = await Model.findOne({ where: { publicId: m.id } });
  const model = existing ? await existing.update(values) : await Model.create(values);
  return { model, warnings: warnings.map((w) => `model '${m.id}': ${w.message}`) };
}

/**
 * The names a catalog file's models use that neither the file nor the catalog holds: a deployment's
 * provider, a fallback (or a model named as its own fallback). The runtime would skip a dangling
 * fallback silently, so the file is refused before any write, as the management API refuses one.
 */
async function danglingReferences(providers: ProviderInput[], models: ModelInput[]): Promise<string[]> {
  const providersOf = models.map((m) => (m.deployments ?? poolOfOne(m.provider!, m.upstream!)).map((d) => d.provider));
  const knownProviders = new Set(providers.map((p) => p.name));
  const knownModels = new Set(models.map((m) => m.id));
  // what the file does not hold, looked up in the catalog in one query each
  const askProviders = [...new Set(providersOf.flat())].filter((n) => !knownProviders.has(n));
  const askModels = [...new Set(models.flatMap((m) => m.fallbacks ?? []))].filter((id) => !knownModels.has(id));
  for (const p of await Provider.findAll({ where: { name: askProviders }, attributes: ['name'] })) knownProviders.add(p.name);
  for (const m of await Model.findAll({ where: { publicId: askModels }, attributes: ['publicId'] })) knownModels.add(m.publicId);
  const out: string[] = [];
  models.forEach((m, i) => {
    for (const p of providersOf[i]) if (!knownProviders.has(p)) out.push(`model '${m.id}': unknown provider '${p}'`);
    for (const f of m.fallbacks ?? []) {
      if (f === m.id) out.push(`model '${m.id}': a model cannot be its own fallback`);
      else if (!knownModels.has(f)) out.push(`model '${m.id}': unknown fallback model '${f}'`);
    }
  });
  return out;
}

/**
 * Imports a catalog file (`{providers: [...], models: [...]}`), validated whole before any write
 * (its fields, and the providers and fallbacks its models name);
 * `warnings` are the models' (upsertModel), each naming its model, then those of the stored
 * deployments of a bedrock provider whose key, region or base_url changed that AWS still does not
 * tell a base_model for (provider-base-models.ts; the file's own models, just asked, are left out),
 * each naming its provider.
 */
export async function importCatalog(redis: RedisClient, doc: unknown): Promise<{ providers: number; models: number; warnings: string[] }> {
  const { value, error } = catalogFileSchema.validate(doc, { abortEarly: false });
  if (error) throw new Error(`invalid catalog file:\n${error.details.map((d) => `  - ${d.message}`).join('\n')}`);
  const dangling = await danglingReferences(value.providers as ProviderInput[], value.models as ModelInput[]);
  if (dangling.length) throw new Error(`invalid catalog file:\n${dangling.map((d) => `  - ${d}`).join('\n')}`);
  const changed: Provider[] = [];
  for (const p of value.providers as ProviderInput[]) {
    const { provider, accessChanged } = await upsertProvider(p);
    if (accessChanged) changed.push(provider);
  }
  const warnings: string[] = [];
  for (const m of value.models as ModelInput[]) warnings.push(...(await upsertModel(m)).warnings);
  const written = (value.models as ModelInput[]).map((m) => m.id);
  for (const p of changed) for (const w of await askProfilesAgain(p, written)) warnings.push(`provider '${p.name}': ${w.message}`);
  await bumpEpoch(redis);
  return { providers: value.providers.length, models: value.models.length, warnings };
}
