import { Op } from 'sequelize';
import { Model, Provider } from '../db/models';
import type { ProviderSettings } from '../db/models/Provider';
import { poolOfOne, type DeploymentSpec } from './deployments';

/**
 * The provider kinds a decision call (docs/systemone.md) can use: OpenAI's chat-completions wire with
 * strict structured output (`response_format: json_schema`) and log-probabilities. `openai` (with or
 * without a preset) and `azure` (the same bodies at Azure's URLs); no other kind has both.
 */
export const DECISION_KINDS: ReadonlySet<string> = new Set(['openai', 'azure']);

/**
 * Azure's structured outputs came with API version `2024-08-01-preview` (GA in `2024-10-21`; `v1` and
 * `preview` have them): an older dated version answers `json_schema` with 400.
 */
const FIRST_AZURE_JSON_SCHEMA = '2024-08-01';

/** Why a provider cannot serve decision calls, or undefined when it can. */
export function decisionMisfit(p: { name: string; kind: string; settings?: ProviderSettings | null }): string | undefined {
  if (!DECISION_KINDS.has(p.kind)) return `provider '${p.name}' is of kind ${p.kind}; decision calls need kind openai or azure`;
  const version = p.settings?.api_version;
  if (p.kind === 'azure' && version && /^\d{4}-\d{2}-\d{2}/.test(version) && version.slice(0, 10) < FIRST_AZURE_JSON_SCHEMA) {
    return `provider '${p.name}' calls Azure API version ${version}, which has no structured outputs (json_schema); use 2024-10-21 or later, or v1`;
  }
  return undefined;
}

/**
 * Why a decision model's pool cannot be served: its deployments' providers that decision calls cannot
 * use (unknown provider names are left to the caller, which refuses them on its own).
 */
export async function decisionPoolMisfits(deployments: DeploymentSpec[]): Promise<string[]> {
  const names = [...new Set(deployments.map((d) => d.provider))];
  const providers = await Provider.findAll({ where: { name: names }, attributes: ['name', 'kind', 'settings'] });
  return providers.map((p) => decisionMisfit(p)).filter((m): m is string => m !== undefined);
}

/** The deployments a model row will have after a write of `values` (its pool, or the pool of one its primary stands for). */
export async function poolAfter(values: { deployments?: DeploymentSpec[]; providerId?: string; upstreamName?: string }, row?: Model): Promise<DeploymentSpec[]> {
  const specs = values.deployments ?? (row?.deployments?.length ? row.deployments : undefined);
  if (specs) return specs;
  const provider = await Provider.findByPk(values.providerId ?? row?.providerId ?? '', { attributes: ['name'] });
  return provider ? poolOfOne(provider.name, values.upstreamName ?? row?.upstreamName ?? '') : [];
}

/**
 * The decision models a provider's deployments serve, and why the provider as it will be after a
 * change (kind, api_version) could not serve them; none when it still can.
 */
export async function decisionUsersRefusing(name: string, after: { kind: string; settings?: ProviderSettings | null }): Promise<{ misfit: string; models: string[] } | undefined> {
  const misfit = decisionMisfit({ name, ...after });
  if (!misfit) return undefined;
  const users = await Model.findAll({
    where: { deployments: { [Op.contains]: [{ provider: name }] as never }, capabilities: { [Op.contains]: { decision: true } } as never },
    attributes: ['publicId'],
    order: [['publicId', 'ASC']],
  });
  return users.length ? { misfit, models: users.map((m) => m.publicId) } : undefined;
}
