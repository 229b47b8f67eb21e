import { Op } from 'sequelize';
import { Model } from '../db/models';
import { ApiError } from '../errors/ApiError';

/**
 * 409 `resource_in_use` when a model's deployment names the provider. A deployment names its provider
 * by name (no foreign key): deleting or renaming a provider a pool still names would silently take
 * that deployment out of routing while its pool and live state still list it. Every path that
 * deletes or renames a provider asks this first (the management API's delete and rename).
 */
export async function assertProviderUnused(name: string, change: 'delete' | 'rename'): Promise<void> {
  const users = await Model.findAll({ where: { deployments: { [Op.contains]: [{ provider: name }] as never } }, attributes: ['publicId'], order: [['publicId', 'ASC']] });
  if (!users.length) return;
  const ids = users.map((m) => `'${m.publicId}'`);
  const list = ids.length > 5 ? `${ids.slice(0, 5).join(', ')} and ${ids.length - 5} more` : ids.join(', ');
  throw new ApiError(409, 'resource_in_use', `Deployments of ${list} name the provider '${name}'; remove or move them first${change === 'rename' ? ' (a provider is renamed only when no deployment names it)' : ''}.`);
}
