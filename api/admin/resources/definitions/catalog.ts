import Joi from 'joi';
import { Model, PlatformCredential, Provider, TokenizerProfile } from '../../../../shared/db/models';
import { decrypt, encrypt } from '../../../../shared/crypto';
import { PROVIDER_KINDS, type ProviderSettings } from '../../../../shared/db/models/Provider';
import { PRESET_NAMES, presetOf } from '../../../../shared/catalog/presets';
import { passthroughAllowed } from '../../../../shared/catalog/passthrough';
import { MAX_IMAGE_TOKENS } from '../../../../shared/tokenizer/media';
import { ApiError } from '../../../../shared/errors/ApiError';
import { poolFields, syncPool } from './pools';
import { checkTokenizer, ENCODINGS } from '../../../../shared/catalog/catalog-ops';
import { pricesSchema } from '../../../../shared/catalog/tier-prices';
import { assertModelUnused, assertProviderUnused, assertTokenizerUnused } from '../../../../shared/catalog/provider-users';
import { decisionUsersRefusing } from '../../../../shared/catalog/decision-providers';
import { askProfilesAgain, profileAccessChanged, type ProviderAccess } from '../../../../shared/catalog/provider-base-models';

export { ENCODINGS };
import { errors } from '../../../../shared/errors/codes';
import { mayRedirectSecrets, originOf, refuseSecretRedirect } from '../secret-destination';
import type { Request } from 'express';
import type { Model as SModel } from 'sequelize';
import { jsonObject, name, slug, uuid, type ResourceDef, type Warning } from '../define';

const CAPABILITIES = /^(chat|embeddings|rerank|image_generation|transcription|vision|decision|tools|json_schema)$/;

export const providers: ResourceDef = {
  path: '/providers',
  family: 'providers',
  object: 'provider',
  description:
    "Upstream providers (one adapter per kind). Their credentials are the platform-credentials family. A bedrock provider's write that changes its region or base_url (or a write of its platform credential) asks AWS again for the `base_model` of its deployments on application inference profiles that have none; `warnings` (`base_model_unresolved`) name those still without one.",
  model: Provider,
  fields: {
    name: { schema: slug(), required: true, filter: true },
    kind: { schema: Joi.string().valid(...PROVIDER_KINDS), required: true, filter: true },
    base_url: {
      schema: Joi.string().uri({ scheme: ['http', 'https'] }).max(500),
      description: 'Required unless `settings.preset` names a service with a known URL.',
      derive: (b) => presetOf((b.settings as ProviderSettings | undefined)?.preset)?.baseUrl,
    },
    settings: { schema: Joi.object({ api_version: Joi.string().max(100), region: Joi.string().pattern(/^[a-z0-9-]+$/).max(40), preset: Joi.string().valid(...PRESET_NAMES) }) },
    passthrough: {
      schema: Joi.boolean().allow(null),
      description:
        "Whether callers may bring their own provider key to it (passthrough, docs/api.md). null (the default): allowed when `base_url` is https on a vendor's own host (api.openai.com, api.anthropic.com, *.openai.azure.com, *.amazonaws.com, generativelanguage.googleapis.com, the hosted presets' hosts ...), whose service checks the key and bills its account; refused for any other server (vLLM, Ollama, an OpenAI-compatible server of the operator's), which may check no key. Returned as the value in force.",
      fromRow: (r) => passthroughAllowed(r as Pick<Provider, 'kind' | 'settings' | 'passthrough' | 'baseUrl'>),
    },
  },
  // What one kind needs of the fields (docs/providers/): checked on the row as it will be after the write.
  async check(values, req, row) {
    await refuseSecretMove(values, req, row);
    const kind = (values.kind ?? row?.get('kind')) as string;
    const settings = (values.settings ?? row?.get('settings') ?? {}) as ProviderSettings;
    const invalid = (param: string, message: string) => new ApiError(400, 'invalid_request', message, { param });
    if (!(values.baseUrl ?? row?.get('baseUrl'))) throw invalid('base_url', '`base_url` is required unless `settings.preset` names a service with a known URL.');
    if (kind === 'azure' && !settings.api_version) throw invalid('settings.api_version', 'An azure provider needs `settings.api_version` (a dated version such as 2024-10-21, or v1).');
    if (settings.preset && kind !== 'openai') throw invalid('settings.preset', '`settings.preset` applies to providers of kind openai only.');
    if (row && values.name !== undefined && values.name !== row.get('name')) await assertProviderUnused(row.get('name') as string, 'rename');
    // a decision model's deployment on this provider must stay one a decision call can use
    const refusing = row && (await decisionUsersRefusing(row.get('name') as string, { kind, settings }));
    if (refusing) throw invalid(values.kind !== undefined ? 'kind' : 'settings.api_version', `Decision models (${refusing.models.join(', ')}) are served by this provider: ${refusing.misfit}.`);
  },
  // Deployments name their provider by name: one a pool still names is neither deleted nor renamed.
  destroy: async (row) => {
    await assertProviderUnused(row.get('name') as string, 'delete');
    await row.destroy();
  },
  // a bedrock provider's new region or base_url: its profiles without base_model asked about again
  afterWrite: async (row, before) => {
    const provider = row as Provider;
    return profileAccessChanged(before as ProviderAccess | undefined, provider, false) ? askProfilesAgain(provider) : [];
  },
};

/**
 * A provider's secret (its platform credential, or the key the CLI or a catalog file stored with it) is
 * sent to its `base_url`: moving a provider that holds one to another origin (scheme, host, port) takes
 * `platform-credentials:write` as well (../secret-destination.ts). With `providers:write` alone it was a
 * way to have the secret sent to a server of one's choosing, and so to read it.
 */
async function refuseSecretMove(values: Record<string, unknown>, req: Request, row?: SModel): Promise<void> {
  if (!row || values.baseUrl === undefined || originOf(values.baseUrl) === originOf(row.get('baseUrl')) || mayRedirectSecrets(req)) return;
  const holdsSecret = row.get('apiKeyEncrypted') !== null || (await PlatformCredential.count({ where: { providerId: row.get('id') as string } })) > 0;
  if (holdsSecret) refuseSecretRedirect(req, 'This provider holds a secret, which is sent to its base_url: moving it to another host takes the scope platform-credentials:write as well.', 'base_url');
}

/** A credential as stored, decrypted in memory only (an update's new secret against its old one). */
const secretOf = (sealed: unknown) => (typeof sealed === 'string' ? decrypt(sealed) : undefined);

/** A provider's credential set, replaced or removed (the provider's own is then the one used): its profiles asked about again. */
async function credentialChanged(cred: PlatformCredential): Promise<Warning[]> {
  const provider = await Provider.findByPk(cred.providerId);
  return provider ? askProfilesAgain(provider) : [];
}

export const platformCredentials: ResourceDef = {
  path: '/platform-credentials',
  family: 'platform-credentials',
  object: 'platform_credential',
  description:
    "A provider's platform credential. `secret` is write-only: stored AES-256-GCM encrypted, never returned; `secret_hint` shows its last 4 characters. On a bedrock provider, setting, replacing or deleting it asks AWS again for the `base_model` of the provider's deployments on application inference profiles that have none; `warnings` (`base_model_unresolved`) name those still without one.",
  model: PlatformCredential,
  fields: {
    provider_id: { schema: uuid(), required: true, createOnly: true, filter: true },
    label: { schema: Joi.string().max(200).allow(null) },
    secret: {
      schema: Joi.string().min(1).max(4096),
      required: true,
      writeOnly: true,
      toRow: (v) => ({ secretEncrypted: encrypt(String(v)), secretHint: String(v).slice(-4) }),
    },
    secret_hint: { schema: Joi.string(), readOnly: true },
  },
  // a bedrock provider's profiles without base_model asked about again (a label, or the same secret, changes nothing)
  afterWrite: (row, before) => (secretOf(before?.secretEncrypted) === secretOf(row.get('secretEncrypted')) ? Promise.resolve([]) : credentialChanged(row as PlatformCredential)),
  afterDelete: (row) => credentialChanged(row as PlatformCredential),
};

export const inferenceModels: ResourceDef = {
  path: '/inference-models',
  family: 'inference-models',
  object: 'inference_model',
  description: 'Catalog entries. A change reaches every inference pod on its next request (the cache epoch moves).',
  model: Model,
  fields: {
    public_id: { schema: Joi.string().pattern(/^[A-Za-z0-9._:/-]+$/).max(200), required: true, filter: true },
    provider_id: { schema: uuid(), required: true, filter: true },
    upstream_name: { schema: Joi.string().min(1).max(200), required: true },
    display_name: { schema: Joi.string().max(200).allow(null) },
    capabilities: { schema: Joi.object().pattern(CAPABILITIES, Joi.boolean()), required: true },
    context_window: { schema: Joi.number().integer().min(1).allow(null) },
    max_output_tokens: { schema: Joi.number().integer().min(1).allow(null) },
    limits: {
      schema: jsonObject().keys({ image_tokens: Joi.number().integer().min(1).max(MAX_IMAGE_TOKENS) }),
      description: 'Task limits; on a chat model `image_tokens`: the most tokens one image input may bill on it (default 1600), what a budget or tpm holds per image.',
    },
    config: { schema: jsonObject(), description: 'Per-task config, e.g. `audio_config`.' },
    prices: {
      schema: pricesSchema(/^[a-z_]+$/),
      description:
        "Micro-dollars per unit. On a chat model, `service_tiers` ({ flex | scale | priority: { input_token, output_token } }) prices OpenAI's service tiers: on the platform's credential a tier is sent upstream only when priced, and a request served on it is billed at its prices (docs/catalog.md, Service tiers). `audio_input_token` / `audio_output_token` price a chat answer's audio tokens: on the platform's credential audio input (`input_audio` parts) or output (`audio`, `modalities`) is refused 400 without its price (docs/catalog.md, Audio tokens). `web_search_call` prices one web search call of OpenAI's search models: on the platform's credential every chat request the model serves is billed one call besides its tokens, and a budget holds it (docs/catalog.md, OpenAI's web search models).",
    },
    tokenizer: { schema: Joi.string().pattern(/^[a-z0-9][a-z0-9_-]{0,62}$/), description: 'An encoding or the name of a tokenizer profile (`/inference-tokenizer-profiles`), which counting then uses.' },
    enabled: { schema: Joi.boolean(), filter: true },
    ...poolFields,
  },
  check: async (values, _req, row) => {
    // other models name it in their fallbacks by its public id: not renamed while one does
    if (row && values.publicId !== undefined && values.publicId !== row.get('publicId')) await assertModelUnused(row.get('publicId') as string, 'rename');
    if (typeof values.tokenizer === 'string') {
      await checkTokenizer(values.tokenizer).catch((err: Error) => {
        throw errors.invalidRequest(err.message);
      });
    }
    return syncPool(values, row);
  },
  destroy: async (row) => {
    await assertModelUnused(row.get('publicId') as string, 'delete');
    await row.destroy();
  },
};

export const tokenizerProfiles: ResourceDef = {
  path: '/inference-tokenizer-profiles',
  family: 'inference-models',
  object: 'inference_tokenizer_profile',
  description: 'Named tokenizer profiles and the encoding each uses.',
  model: TokenizerProfile,
  fields: {
    name: { schema: slug(), required: true, filter: true },
    encoding: { schema: Joi.string().valid(...ENCODINGS), required: true, filter: true },
    description: { schema: name().allow(null) },
  },
  // models name it in their `tokenizer`: neither deleted nor renamed while one does
  check: async (values, _req, row) => {
    if (row && values.name !== undefined && values.name !== row.get('name')) await assertTokenizerUnused(row.get('name') as string, 'rename');
  },
  destroy: async (row) => {
    await assertTokenizerUnused(row.get('name') as string, 'delete');
    await row.destroy();
  },
};
