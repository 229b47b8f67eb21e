import type { RedisClient } from '../redis/connection';
import { Project } from '../db/models';
import { bumpEpoch } from '../cache/epoch';
import { isUuid } from '../uuid';
import { validControls, type KeyControlsInput } from '../limits/key-input';

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

/**
 * Sets (or with `budget_usd: null` removes) a project's spending limit, shared by all its keys
 * (docs/keys.md); validated like a key's budget (throws an Error naming the field). Every pod applies
 * it from its next request (the cache epoch moves). The management API, the CLI and the dashboard use it.
 */
export async function setProjectBudget(redis: RedisClient, p: Project, input: Pick<KeyControlsInput, 'budget_usd' | 'budget_period'>): Promise<Project> {
  const row = validControls({ budget_usd: input.budget_usd, ...(input.budget_period !== undefined ? { budget_period: input.budget_period } : {}) });
  await p.update({ budgetMicros: row.budgetMicros ?? null, budgetPeriod: row.budgetPeriod ?? null });
  await bumpEpoch(redis);
  return p;
}
