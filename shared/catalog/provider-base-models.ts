import { Op } from 'sequelize';
import { Model, type Provider } from '../db/models';
import type { ProviderSettings } from '../db/models/Provider';
import { db } from '../db/sequelize';
import { merged } from '../merged';
import { isApplicationProfile } from '../../workers/providers/bedrock/inference-profile';
import { poolOfOne, type DeploymentSpec } from './deployments';
import { withBaseModels, type BaseModelWarning } from './base-models';

/**
 * A bedrock deployment on an application inference profile saved without `base_model` (AWS did not
 * tell: base-models.ts) is asked about again when what AWS is asked with changes: its provider's
 * credential, region or base_url. Every write of those comes here: the management API's `providers`
 * and `platform-credentials` (api/admin/resources/definitions/catalog.ts), a catalog file's providers
 * and `gateway provider add` (catalog-ops.ts importCatalog).
 */

/** What of a provider's row says how AWS is asked. */
export interface ProviderAccess {
  kind: string;
  baseUrl: string;
  settings: ProviderSettings | null;
}

/**
 * Whether a provider's write changed how AWS is asked about its profiles: it is (now) of kind bedrock
 * and its credential was written, or its kind, base_url or region changed. A provider made by the
 * write (`before` undefined) counts as changed.
 */
export function profileAccessChanged(before: ProviderAccess | undefined, after: ProviderAccess, credentialWritten: boolean): boolean {
  if (after.kind !== 'bedrock') return false;
  if (!before || credentialWritten) return true;
  return before.kind !== after.kind || before.baseUrl !== after.baseUrl || before.settings?.region !== after.settings?.region;
}

/** A model's deployments as routed: its pool, or the pool of one its primary stands for (when it is this provider). */
function poolOf(row: Model, provider: Provider): DeploymentSpec[] {
  if (row.deployments?.length) return row.deployments;
  return row.providerId === provider.id ? poolOfOne(provider.name, row.upstreamName) : [];
}

/** One deployment to ask about: the model whose pool it is in, and its place there. */
interface Pending {
  model: Model;
  index: number;
  deployment: DeploymentSpec;
}

/**
 * After a change of a bedrock provider's access (profileAccessChanged): every deployment on it whose
 * upstream is an application inference profile's ARN and which has no `base_model` is asked about
 * again (withBaseModels: the provider's credential and region as now saved, one GetInferenceProfile
 * per ARN), and what AWS tells is saved into its pool. A `base_model` present is never replaced, nor
 * asked about. `except`: public ids of models not to look at (a catalog file's own, just written and
 * asked). Returns a warning for each deployment still without one, named by its pool and place
 * (`pools["<model>"].deployments[i].base_model`). The caller moves the cache epoch afterwards.
 */
export async function askProfilesAgain(provider: Provider, except: string[] = []): Promise<BaseModelWarning[]> {
  if (provider.kind !== 'bedrock') return [];
  const rows = await Model.findAll({
    where: { [Op.or]: [{ providerId: provider.id }, { deployments: { [Op.contains]: [{ provider: provider.name }] as never } }] },
    order: [['publicId', 'ASC']],
  });
  const pending: Pending[] = rows
    .filter((m) => !except.includes(m.publicId))
    .flatMap((model) => poolOf(model, provider).map((deployment, index) => ({ model, index, deployment })))
    .filter(({ deployment: d }) => d.provider === provider.name && d.base_model === undefined && isApplicationProfile(d.upstream));
  if (!pending.length) return [];
  const { deployments, warnings } = await withBaseModels(
    pending.map((p) => p.deployment),
    [provider],
    {
      param: (i) => `pools[${JSON.stringify(pending[i].model.publicId)}].deployments[${pending[i].index}].base_model`,
      subject: (d, i) => `Deployment '${d.name}' of model '${pending[i].model.publicId}' is still`,
    },
  );
  const learned = new Map<string, DeploymentSpec[]>();
  deployments.forEach((d, i) => {
    if (d.base_model !== undefined) learned.set(pending[i].model.id, (learned.get(pending[i].model.id) ?? []).concat(d));
  });
  for (const [id, found] of learned) await saveBaseModels(id, provider, found);
  return warnings;
}

/**
 * Writes the base models learned into a model's pool, read again under a row lock: only into a
 * deployment that is still the one asked about (same name, provider and upstream) and still has none
 * (a pool written meanwhile wins).
 */
async function saveBaseModels(modelId: string, provider: Provider, found: DeploymentSpec[]): Promise<void> {
  await db().transaction(async (transaction) => {
    const row = await Model.findByPk(modelId, { transaction, lock: transaction.LOCK.UPDATE });
    if (!row) return;
    let changed = false;
    const pool = poolOf(row, provider).map((d) => {
      const f = found.find((x) => x.name === d.name && x.provider === d.provider && x.upstream === d.upstream);
      if (!f || d.base_model !== undefined) return d;
      changed = true;
      return merged(d, { base_model: f.base_model });
    });
    if (changed) await row.update({ deployments: pool }, { transaction });
  });
}
