import type { Provider } from '../db/models';
import type { DeploymentSpec } from './deployments';
import { providerCredential } from './provider-credential';
import { isApplicationProfile, profileModel, type ProfileModel } from '../../workers/providers/bedrock/inference-profile';

/** Why a deployment was saved without the `base_model` the gateway meant to fill in (the write itself stands). */
export interface BaseModelWarning {
  code: 'base_model_unresolved';
  /** `deployments[i].base_model` */
  param: string;
  message: string;
}

/** How a warning names its deployment (the `i`th of those given): the field (`param`) and the start of its message. */
export interface WarningNaming {
  param(i: number): string;
  subject(d: DeploymentSpec, i: number): string;
}

/** A pool's write: the deployment is the body's `deployments[i]`, saved as written. */
const WRITTEN: WarningNaming = { param: (i) => `deployments[${i}].base_model`, subject: (d) => `Deployment '${d.name}' was saved` };

/**
 * The deployments with `base_model` filled in where a bedrock deployment's upstream is an
 * application inference profile's ARN (which does not name its model) and the write names none: the
 * foundation model AWS's `GetInferenceProfile` lists for it, asked with the provider's own credential
 * and region (workers/providers/bedrock/inference-profile.ts). A `base_model` given is kept and
 * nothing is asked for it. When AWS does not say (the credential lacks `bedrock:GetInferenceProfile`,
 * no such profile, no answer, models that differ) the deployment is kept as written and a warning
 * says why (`naming` says how it names the deployment). Every management and catalog write of
 * deployments comes through here, and so does a change of a bedrock provider's access (provider-base-models.ts).
 */
export async function withBaseModels(deployments: DeploymentSpec[], providers: Provider[], naming: WarningNaming = WRITTEN): Promise<{ deployments: DeploymentSpec[]; warnings: BaseModelWarning[] }> {
  const asked = new Map<string, Promise<ProfileModel>>(); // one call per provider and profile
  const ask = (p: Provider, arn: string) => {
    const key = JSON.stringify([p.id, arn]);
    if (!asked.has(key)) asked.set(key, providerCredential(p.id).then((apiKey) => profileModel({ baseUrl: p.baseUrl, settings: p.settings, apiKey }, arn)));
    return asked.get(key)!;
  };
  const answers = await Promise.all(
    deployments.map((d) => {
      const p = providers.find((x) => x.name === d.provider);
      return p?.kind === 'bedrock' && d.base_model === undefined && isApplicationProfile(d.upstream) ? ask(p, d.upstream) : undefined;
    }),
  );
  const warnings: BaseModelWarning[] = [];
  const resolved = deployments.map((d, i) => {
    const a = answers[i];
    if (!a) return d;
    if ('model' in a) return { ...d, base_model: a.model };
    warnings.push({
      code: 'base_model_unresolved',
      param: naming.param(i),
      message: `${naming.subject(d, i)} without base_model: its model could not be read from AWS (GetInferenceProfile ${d.upstream}): ${a.unresolved}. Without it the gateway knows no model family for the profile; give base_model (the foundation model id it serves) by hand.`,
    });
    return d;
  });
  return { deployments: resolved, warnings };
}
