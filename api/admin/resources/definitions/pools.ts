import Joi from 'joi';
import type { Model as Row } from 'sequelize';
import { Model, Provider } from '../../../../shared/db/models';
import { errors } from '../../../../shared/errors/codes';
import { baseModelMisfits, deploymentsSchema, fallbacksSchema, poolOfOne, type DeploymentSpec } from '../../../../shared/catalog/deployments';
import { decisionPoolMisfits, poolAfter } from '../../../../shared/catalog/decision-providers';
import { ApiError } from '../../../../shared/errors/ApiError';
import { withBaseModels, type BaseModelWarning } from '../../../../shared/catalog/base-models';
import type { FieldSpec, ResourceDef } from '../define';

/** The pool fields a model's record and its pool record share. */
export const poolFields: Record<string, FieldSpec> = {
  deployments: {
    schema: deploymentsSchema,
    description:
      'The pool: `{name, provider (provider name), upstream, weight?, priority? (lower first), rpm?, tpm?, max_concurrency?, base_model? (bedrock: the foundation model an application inference profile serves; when omitted on the ARN of such a profile the gateway asks AWS (GetInferenceProfile), and `warnings` in the answer say when it could not), inline_image_urls? (the gateway downloads a request\'s image URLs through its SSRF guard and sends this deployment data URLs; default on for a server the operator runs, off for a vendor\'s API: docs/security.md)}`. The first deployment sets `provider_id` and `upstream_name`.',
  },
  fallbacks: { schema: fallbacksSchema, description: 'Public ids of fallback models, tried in order (docs/routing.md).' },
};

/**
 * Keeps a model's primary provider/upstream and its deployments in step, and checks the names they
 * refer to: written deployments set the primary from their first entry; a new primary on a pool of
 * one rewrites that one deployment. Fallbacks must be other existing models. A decision model's
 * deployments must all name providers a decision call can use (shared/catalog/decision-providers.ts),
 * whichever write would make it otherwise (its pool, its primary, or its capabilities). A bedrock
 * deployment on an application inference profile without `base_model` gets it from AWS
 * (shared/catalog/base-models.ts); the warnings say where AWS did not tell, for the write's answer.
 */
export async function syncPool(values: Record<string, unknown>, row?: Row): Promise<BaseModelWarning[]> {
  const current = row as Model | undefined;
  const deployments = values.deployments as DeploymentSpec[] | undefined;
  const written = deployments ? 'deployments' : values.providerId !== undefined ? 'provider_id' : 'capabilities';
  let found: Provider[] = [];
  if (deployments) {
    const names = [...new Set(deployments.map((d) => d.provider))];
    found = await Provider.findAll({ where: { name: names } });
    const missing = names.filter((n) => !found.some((p) => p.name === n));
    if (missing.length) throw errors.invalidRequest(`Unknown provider(s) in deployments: ${missing.join(', ')}.`);
    const misnamed = baseModelMisfits(deployments, (n) => found.find((p) => p.name === n)?.kind);
    if (misnamed.length) throw errors.invalidRequest(`\`base_model\` is read on deployments of bedrock providers only: ${misnamed.join(', ')}.`);
    values.providerId = found.find((p) => p.name === deployments[0].provider)!.id;
    values.upstreamName = deployments[0].upstream;
  } else if ((current?.deployments?.length ?? 0) > 1) {
    // a pool's primary is its first deployment (passthrough stays with the primary's provider): a new one alone would contradict it
    for (const [attr, param] of [['providerId', 'provider_id'], ['upstreamName', 'upstream_name']] as const) {
      if (values[attr] !== undefined && values[attr] !== current![attr]) {
        throw new ApiError(400, 'invalid_request', `The model's pool has ${current!.deployments.length} deployments and its first one is its primary: write \`deployments\` (first the new primary) instead of \`${param}\`.`, { param });
      }
    }
  } else if (values.providerId !== undefined || values.upstreamName !== undefined) {
    const provider = await Provider.findByPk(String(values.providerId ?? current?.providerId));
    if (provider) {
      values.deployments = poolOfOne(provider.name, String(values.upstreamName ?? current?.upstreamName));
      found = [provider];
    }
  }
  const fallbacks = values.fallbacks as string[] | undefined;
  if (fallbacks?.length) {
    const own = (values.publicId as string | undefined) ?? current?.publicId;
    if (own && fallbacks.includes(own)) throw errors.invalidRequest('A model cannot be its own fallback.');
    const found = await Model.findAll({ where: { publicId: fallbacks }, attributes: ['publicId'] });
    const missing = fallbacks.filter((f) => !found.some((m) => m.publicId === f));
    if (missing.length) throw errors.invalidRequest(`Unknown fallback model(s): ${missing.join(', ')}.`);
  }
  const capabilities = (values.capabilities ?? current?.capabilities) as Record<string, boolean> | undefined;
  if (capabilities?.decision) {
    const misfits = await decisionPoolMisfits(await poolAfter(values as Parameters<typeof poolAfter>[0], current));
    if (misfits.length) throw new ApiError(400, 'invalid_request', `A decision model's deployments must be of providers decision calls can use: ${misfits.join('; ')}.`, { param: written });
  }
  // last, once the write is known to be taken: AWS is asked only for a pool that will be saved
  if (!values.deployments) return [];
  const { deployments: pool, warnings } = await withBaseModels(values.deployments as DeploymentSpec[], found);
  values.deployments = pool;
  return warnings;
}

export const modelPools: ResourceDef = {
  path: '/inference-model-pools',
  family: 'inference-models',
  object: 'inference_model_pool',
  description:
    "Each catalog model's pool: its deployments and fallbacks (the same fields as the model's own record; the id is the model's). Live health: `GET /inference-model-pools/{id}/state`.",
  model: Model,
  ops: ['list', 'get', 'update'],
  fields: {
    model: { schema: Joi.string().pattern(/^[A-Za-z0-9._:/-]+$/).max(200), attr: 'publicId', readOnly: true, filter: true },
    ...poolFields,
  },
  check: (values, _req, row) => syncPool(values, row),
};
