import type { RedisClient } from '../redis/connection';
import { Model, Organization, Plan, Project, Provider, User, Membership, Wallet } from './models';
import { bumpEpoch } from '../cache/epoch';
import { createApiKey, type CreatedKey } from '../tenancy/ops';
import { DEFAULT_CATALOG } from '../catalog/default-catalog';
import { credit } from '../billing/wallet';

/** Credit the demo org's wallet starts with (micro-dollars): metered decision calls work out of the box. */
const DEMO_CREDIT_MICROS = 10_000_000;

export const DEMO_ORG_SLUG = 'demo';

/** Plans every install has. Lane counts are per org; `background` entitles the background lane. */
const PLANS = [
  { name: 'free', laneLimits: { 'chat:interactive': 4, 'chat:background': 0 }, entitlements: { background: false } },
  { name: 'pro', laneLimits: { 'chat:interactive': 16, 'chat:background': 8 }, entitlements: { background: true } },
];

/**
 * Idempotent seed: plans, the simulator provider and the default catalog (pointed at `simulatorUrl`),
 * and a demo organization. Returns the demo key only when it was created by this run.
 */
export async function seed(redis: RedisClient, simulatorUrl: string): Promise<{ demoKey?: CreatedKey }> {
  for (const p of PLANS) await Plan.findOrCreate({ where: { name: p.name }, defaults: p });
  const [provider] = await Provider.findOrCreate({
    where: { name: 'simulator' },
    defaults: { name: 'simulator', kind: 'openai', baseUrl: `${simulatorUrl}/v1`, apiKeyEncrypted: null },
  });
  if (provider.baseUrl !== `${simulatorUrl}/v1`) await provider.update({ baseUrl: `${simulatorUrl}/v1` });
  // The simulator also speaks Anthropic's messages format; its base URL is the host root.
  const [anthropic] = await Provider.findOrCreate({
    where: { name: 'simulator-anthropic' },
    defaults: { name: 'simulator-anthropic', kind: 'anthropic', baseUrl: simulatorUrl, apiKeyEncrypted: null },
  });
  if (anthropic.baseUrl !== simulatorUrl) await anthropic.update({ baseUrl: simulatorUrl });
  // ...and Cohere's v2 rerank format (host root too: the adapter adds `/v2/rerank`).
  const [cohere] = await Provider.findOrCreate({
    where: { name: 'simulator-cohere' },
    defaults: { name: 'simulator-cohere', kind: 'cohere', baseUrl: simulatorUrl, apiKeyEncrypted: null },
  });
  if (cohere.baseUrl !== simulatorUrl) await cohere.update({ baseUrl: simulatorUrl });
  const providerOf = { openai: provider, anthropic, cohere };
  for (const { provider: kind, ...m } of DEFAULT_CATALOG) {
    const providerId = providerOf[kind ?? 'openai'].id;
    const [row, created] = await Model.findOrCreate({ where: { publicId: m.publicId }, defaults: { ...m, providerId } });
    if (!created) await row.update({ ...m, providerId });
  }
  let demoKey: CreatedKey | undefined;
  let org = await Organization.findOne({ where: { slug: DEMO_ORG_SLUG } });
  if (!org) {
    const pro = await Plan.findOne({ where: { name: 'pro' } });
    org = await Organization.create({ name: 'Demo', slug: DEMO_ORG_SLUG, planId: pro!.id });
    const project = await Project.create({ orgId: org.id, name: 'Default', slug: 'default' });
    const [user] = await User.findOrCreate({ where: { email: 'demo@example.com' }, defaults: { email: 'demo@example.com', name: 'Demo Owner' } });
    await Membership.create({ userId: user.id, orgId: org.id, role: 'owner' });
    demoKey = await createApiKey(redis, { orgId: org.id, projectId: null, name: 'demo' });
    void project;
  }
  if (!(await Wallet.findOne({ where: { orgId: org.id } }))) await credit(org.id, DEMO_CREDIT_MICROS);
  await bumpEpoch(redis);
  return { demoKey };
}
