import { Op } from 'sequelize';
import { Model } from '../db/models';
import { ApiError } from '../errors/ApiError';

/**
 * Catalog records other records name by name, without a foreign key: a provider (a deployment's
 * `provider`), a model (another model's `fallbacks`), a tokenizer profile (a model's `tokenizer`).
 * Deleting or renaming one still named would leave the name pointing at nothing, and the runtime
 * skips such a name silently (the deployment or fallback leaves routing, the count falls back to
 * o200k_base). Every path that deletes or renames one asks its check here first.
 */
async function refuseIfNamed(users: Model[], named: (models: string) => string, change: 'delete' | 'rename'): Promise<void> {
  if (!users.length) return;
  const ids = users.map((m) => `'${m.publicId}'`);
  const list = ids.length > 5 ? `${ids.slice(0, 5).join(', ')} and ${ids.length - 5} more` : ids.join(', ');
  throw new ApiError(409, 'resource_in_use', `${named(list)}; remove or move them first${change === 'rename' ? ' (it is renamed only when nothing names it)' : ''}.`);
}

const usersWhere = (where: Record<string, unknown>) => Model.findAll({ where: where as never, attributes: ['publicId'], order: [['publicId', 'ASC']] });

/** 409 `resource_in_use` when a model's deployment names the provider (the management API's provider delete and rename). */
export async function assertProviderUnused(name: string, change: 'delete' | 'rename'): Promise<void> {
  await refuseIfNamed(await usersWhere({ deployments: { [Op.contains]: [{ provider: name }] } }), (list) => `Deployments of ${list} name the provider '${name}'`, change);
}

/** 409 `resource_in_use` when another model names the model as a fallback (its delete and a change of its public id). */
export async function assertModelUnused(publicId: string, change: 'delete' | 'rename'): Promise<void> {
  await refuseIfNamed(await usersWhere({ fallbacks: { [Op.contains]: [publicId] } }), (list) => `Models ${list} name the model '${publicId}' as a fallback`, change);
}

/** 409 `resource_in_use` when a model's `tokenizer` names the tokenizer profile (its delete and rename). */
export async function assertTokenizerUnused(name: string, change: 'delete' | 'rename'): Promise<void> {
  await refuseIfNamed(await usersWhere({ tokenizer: name }), (list) => `Models ${list} count tokens with the tokenizer profile '${name}'`, change);
}
