import Joi from 'joi';

/**
 * A model pool's deployment as stored (the `deployments` JSON of a model) and as the catalog file and
 * the management API write it: a provider (by name), the upstream's own model name, and optionally a
 * weight, a priority tier (lower is tried first), its own limits and, on a bedrock provider, the
 * foundation model its upstream serves (`base_model`).
 */
export interface DeploymentSpec {
  name: string;
  provider: string;
  upstream: string;
  weight?: number;
  priority?: number;
  rpm?: number;
  tpm?: number;
  max_concurrency?: number;
  /**
   * Bedrock only: the foundation model (`anthropic.claude-opus-4-6-v1`, or its ARN) an `upstream`
   * that does not name it serves (an application inference profile's ARN), read for the model's
   * request form (docs/providers/bedrock.md); `upstream` is still what is called.
   */
  base_model?: string;
  /**
   * Whether the gateway downloads a request's http(s) image URLs itself (through the SSRF guard) and
   * sends this deployment base64 data URLs instead, so that the upstream server never fetches a
   * caller's URL from inside the operator's network. Left out: on for a server the operator runs,
   * off for a public vendor's API (shared/catalog/inline-images.ts).
   */
  inline_image_urls?: boolean;
}

export const deploymentSchema = Joi.object({
  name: Joi.string().pattern(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,62}$/).required(),
  provider: Joi.string().min(1).max(200).required(),
  upstream: Joi.string().min(1).max(200).required(),
  weight: Joi.number().positive().max(1_000_000),
  priority: Joi.number().integer().min(0).max(1000),
  rpm: Joi.number().integer().min(1),
  tpm: Joi.number().integer().min(1),
  max_concurrency: Joi.number().integer().min(1),
  base_model: Joi.string().pattern(/^[A-Za-z0-9._:/-]+$/).max(300),
  inline_image_urls: Joi.boolean(),
});

export const deploymentsSchema = Joi.array().items(deploymentSchema).min(1).max(64).unique('name');

export const fallbacksSchema = Joi.array().items(Joi.string().pattern(/^[A-Za-z0-9._:/-]+$/).max(200)).max(16).unique();

/** The deployments that name a `base_model` on a provider of a kind other than bedrock (whose adapter alone reads it). */
export function baseModelMisfits(deployments: DeploymentSpec[], kindOf: (provider: string) => string | undefined): string[] {
  return deployments.filter((d) => d.base_model !== undefined && kindOf(d.provider) !== 'bedrock').map((d) => d.name);
}

/** The pool of one that a model with only a provider and an upstream name stands for. */
export function poolOfOne(providerName: string, upstream: string): DeploymentSpec[] {
  return [{ name: providerName, provider: providerName, upstream }];
}
