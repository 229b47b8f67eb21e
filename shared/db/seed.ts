import { poolOfOne } from '../catalog/deployments';
import type { RedisClient } from '../redis/connection';
import { Model, Organization, Plan, Project, Provider, User, Membership, Wallet, SearchProvider } from './models';
import { encrypt } from '../crypto';
import { bumpEpoch } from '../cache/epoch';
import { createApiKey, type CreatedKey } from '../tenancy/ops';
import { DEFAULT_CATALOG } from '../catalog/default-catalog';
import { credit } from '../billing/wallet';

/** Credit the demo org's wallet starts with (micro-dollars): metered decision calls work out of the box. */
const DEMO_CREDIT_MICROS = 10_000_000;

export const DEMO_ORG_SLUG = 'demo';

/** Plans every install has. Lane counts are per org; `background` entitles the background lane. */
const PLANS = [
  { name: 'free', laneLimits: { 'chat:interactive': 4, 'chat:background': 0 }, entitlements: { background: false, web_search_allowance: 100 } },
  { name: 'pro', laneLimits: { 'chat:interactive': 16, 'chat:background': 8 }, entitlements: { background: true, web_search_allowance: 1000 } },
];

/**
 * The three web search providers, on the simulator (which speaks each one's wire format under its own
 * base path), with platform keys the simulator accepts. Brave is the platform default. Prices per
 * search / per page fetch in micro-dollars.
 */
const SEARCH_PROVIDERS = [
  { name: 'brave', kind: 'brave', path: '/brave', priceMicros: '5000', fetchPriceMicros: '1000', isDefault: true },
  { name: 'tavily', kind: 'tavily', path: '/tavily', priceMicros: '8000', fetchPriceMicros: '1000', isDefault: false },
  { name: 'exa', kind: 'exa', path: '/exa', priceMicros: '5000', fetchPriceMicros: '1000', isDefault: false },
];

async function seedSearchProviders(simulatorUrl: string): Promise<void> {
  for (const { path, ...p } of SEARCH_PROVIDERS) {
    const baseUrl = `${simulatorUrl}${path}`;
    const [row] = await SearchProvider.findOrCreate({
      where: { name: p.name },
      defaults: { ...p, baseUrl, enabled: true, apiKeyEncrypted: encrypt(`sim-${p.name}-platform-key`) },
    });
    if (row.baseUrl !== baseUrl) await row.update({ baseUrl });
  }
}

/**
 * Idempotent seed: plans, the simulator provider and the default catalog (pointed at `simulatorUrl`),
 * and a demo organization. Returns the demo key only when it was created by this run.
 */
export async function seed(redis: RedisClient, simulatorUrl: string): Promise<{ demoKey?: CreatedKey }> {
  for (const p of PLANS) {
    const [plan] = await Plan.findOrCreate({ where: { name: p.name }, defaults: p });
    // plans seeded before web search get its allowance once (an operator's own value is kept)
    if (plan.entitlements.web_search_allowance === undefined) await plan.update({ entitlements: { ...plan.entitlements, web_search_allowance: p.entitlements.web_search_allowance } });
  }
  await seedSearchProviders(simulatorUrl);
  const [provider] = await Provider.findOrCreate({
    where: { name: 'simulator' },
    defaults: { name: 'simulator', kind: 'openai', baseUrl: `${simulatorUrl}/v1`, apiKeyEncrypted: null, passthrough: true },
  });
  if (provider.baseUrl !== `${simulatorUrl}/v1`) await provider.update({ baseUrl: `${simulatorUrl}/v1` });
  // The simulator also speaks Anthropic's messages format; its base URL is the host root.
  const [anthropic] = await Provider.findOrCreate({
    where: { name: 'simulator-anthropic' },
    defaults: { name: 'simulator-anthropic', kind: 'anthropic', baseUrl: simulatorUrl, apiKeyEncrypted: null, passthrough: true },
  });
  if (anthropic.baseUrl !== simulatorUrl) await anthropic.update({ baseUrl: simulatorUrl });
  // ...and Cohere's v2 rerank format (host root too: the adapter adds `/v2/rerank`).
  const [cohere] = await Provider.findOrCreate({
    where: { name: 'simulator-cohere' },
    defaults: { name: 'simulator-cohere', kind: 'cohere', baseUrl: simulatorUrl, apiKeyEncrypted: null, passthrough: true },
  });
  if (cohere.baseUrl !== simulatorUrl) await cohere.update({ baseUrl: simulatorUrl });
  // the simulator plays the vendors' services, which check a caller's own key (passthrough)
  for (const p of [provider, anthropic, cohere]) if (p.passthrough === null) await p.update({ passthrough: true });
  const providerOf = { openai: provider, anthropic, cohere };
  for (const { provider: kind, ...m } of DEFAULT_CATALOG) {
    const { id: providerId, name: providerName } = providerOf[kind ?? 'openai'];
    const values = { ...m, providerId, deployments: poolOfOne(providerName, m.upstreamName) };
    const [row, created] = await Model.findOrCreate({ where: { publicId: m.publicId }, defaults: values });
    if (!created) await row.update(values);
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
