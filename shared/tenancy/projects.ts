import type { RedisClient } from '../redis/connection';
import { Project } from '../db/models';
import { bumpEpoch } from '../cache/epoch';
import { isUuid } from '../uuid';

/**
 * Archives an active project of the org (by id or slug): it stays listed with its history, and is
 * no longer accepted as SERVICE-PROJECT-ID or `/a/{key}/p/{project}` (the cache epoch moves). Null when none.
 */
export async function archiveProject(redis: RedisClient, orgId: string, idOrSlug: string): Promise<Project | null> {
  const p = await Project.findOne({ where: { orgId, archivedAt: null, ...(isUuid(idOrSlug) ? { id: idOrSlug } : { slug: idOrSlug }) } });
  if (!p) return null;
  await p.update({ archivedAt: new Date() });
  await bumpEpoch(redis);
  return p;
}
