import crypto from 'crypto';
import { upsertModel, upsertProvider } from '../../shared/catalog/catalog-ops';
import type { DeploymentSpec } from '../../shared/catalog/deployments';
import { bumpEpoch } from '../../shared/cache/epoch';
import { freePort } from '../../scripts/services/free-port';
import { env } from './harness';
import { Model } from '../../shared/db/models';
import { PoolState } from '../../shared/routing/pool-state';

export const rndId = () => crypto.randomBytes(4).toString('hex');

/**
 * A model (chat unless `capabilities` say otherwise) served by a pool of deployments (each upstream name its own simulator knobs), on a
 * fresh public id; the pods see it at once (epoch bump).
 */
export async function poolModel(
  deployments: DeploymentSpec[],
  extra: { fallbacks?: string[]; capabilities?: Record<string, boolean>; context_window?: number; limits?: Record<string, number>; prices?: Record<string, number> } = {},
): Promise<string> {
  const id = `pool-${rndId()}`;
  await upsertModel({ id, deployments, capabilities: extra.capabilities ?? { chat: true, vision: true }, fallbacks: extra.fallbacks, context_window: extra.context_window, limits: extra.limits, prices: extra.prices ?? { input_token: 1, output_token: 1 } });
  await bumpEpoch(env().redis);
  return id;
}

/** An OpenAI-kind provider on a loopback port nothing listens on: every call is a refused connection. */
export async function refusingProvider(): Promise<string> {
  const name = `refused-${rndId()}`;
  await upsertProvider({ name, kind: 'openai', base_url: `http://127.0.0.1:${await freePort()}/v1` });
  return name;
}

/** A simulator deployment: upstream name `<name>-<id>` so that knobs and the request log tell them apart. */
export const simDeployment = (name: string, extra: Partial<DeploymentSpec> = {}): DeploymentSpec => ({
  name,
  provider: 'simulator',
  upstream: `${name}-${rndId()}`,
  ...extra,
});

/** How many requests each upstream name received since the last reset. */
export function hitsByUpstream(): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of env().sim.log.entries) if (e.model) m.set(e.model, (m.get(e.model) ?? 0) + 1);
  return m;
}

/** The live state of a pool model's deployments (in flight, failures, cooldown, probe), as every worker sees it. */
export async function poolStateOf(model: string, names: string[]) {
  const id = (await Model.findOne({ where: { publicId: model } }))!.id;
  return new PoolState(env().redis, { probeLeaseMs: 0, inflightLeaseMs: 0, backoffBaseMs: 0, backoffMaxMs: 0 }).inspect(id, names);
}
