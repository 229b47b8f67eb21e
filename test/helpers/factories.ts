import crypto from 'crypto';
import type { RedisClient } from '../../shared/redis/connection';
import { Organization, Plan, Project } from '../../shared/db/models';
import { bumpEpoch } from '../../shared/cache/epoch';
import { createApiKey } from '../../shared/tenancy/ops';
import type { LaneLimits, Entitlements } from '../../shared/db/models/Plan';

export interface TestOrg {
  org: Organization;
  project: Project;
  key: string;
  keyId: string;
}

/** A fresh org (unique slug) on a plan, with a project and an inference key. */
export async function buildOrg(
  redis: RedisClient,
  overrides: { plan?: string; laneOverrides?: LaneLimits; entitlements?: Entitlements; policies?: Record<string, unknown> } = {},
): Promise<TestOrg> {
  const plan = await Plan.findOne({ where: { name: overrides.plan ?? 'pro' } });
  const slug = `org-${crypto.randomBytes(5).toString('hex')}`;
  const org = await Organization.create({
    name: slug,
    slug,
    planId: plan?.id ?? null,
    laneOverrides: overrides.laneOverrides ?? {},
    entitlements: overrides.entitlements ?? {},
    policies: overrides.policies ?? {},
  });
  const project = await Project.create({ orgId: org.id, name: 'Proj', slug: 'proj' });
  const k = await createApiKey(redis, { orgId: org.id });
  await bumpEpoch(redis);
  return { org, project, key: k.key, keyId: k.id };
}
