import { chatComplete as openaiChat, type ChatOutcome } from '../providers/openai/chatComplete';
import { chatComplete as azureChat } from '../providers/azure/chatComplete';
import { platformCredential } from '../credentials';
import { presetOf } from '../../shared/catalog/presets';
import { systemoneErrors } from '../../shared/systemone/errors';
import { config } from '../../shared/config/env';
import type { ProviderSettings } from '../../shared/db/models/Provider';
import type { SystemoneJob, UpstreamTarget } from '../../shared/queues/payloads';
import type { CancelSignal } from '../../shared/cancel-source';
import type { UpstreamCall } from '../providers/types';

type ChatAdapter = (call: UpstreamCall, operation: 'chat', body: Record<string, unknown>, publicModel: string, stream: undefined) => Promise<ChatOutcome>;

/**
 * The chat adapters a decision call goes through, by provider kind (shared/catalog/decision-providers.ts):
 * OpenAI's, and Azure's (OpenAI's bodies at Azure's deployment URLs with its `api-key` header and
 * `api-version`). Each applies the provider's settings as for chat: a preset's adaptations, Azure's API version.
 */
const ADAPTERS: Partial<Record<string, ChatAdapter>> = { openai: openaiChat, azure: azureChat };

/** What the decision call asks for only when the service has it: left out where a preset's service refuses it. */
const OPTIONAL_FIELDS = ['logprobs', 'top_logprobs'];

/**
 * The decision body for a deployment: as built, except that log-probabilities are not asked of a service
 * whose preset refuses them (groq, mistral: docs/providers/presets.md). Chat refuses such a field when a
 * caller sends it; here the gateway asks for it, so it is left out instead and noul answers read the
 * model's stated probability (as with the model's `config.logprobs: false`).
 */
export function decisionBody(body: Record<string, unknown>, settings: ProviderSettings | undefined): Record<string, unknown> {
  const refused = presetOf(settings?.preset)?.refuses.filter((f) => OPTIONAL_FIELDS.includes(f) && f in body);
  if (!refused?.length) return body;
  const out = { ...body };
  for (const f of refused) delete out[f];
  return out;
}

/**
 * One upstream attempt of a decision job on deployment `t` (the pool's router picks it and retries
 * elsewhere, so the call makes no retries of its own), with the provider's settings as chat has them.
 */
export async function callDecisionDeployment(job: SystemoneJob, t: UpstreamTarget, signal: CancelSignal): Promise<ChatOutcome> {
  const adapter = ADAPTERS[t.kind];
  if (!adapter) throw systemoneErrors.backendError(`No decision adapter for upstream kind '${t.kind}'.`);
  const apiKey = await platformCredential(t.providerId);
  const call: UpstreamCall = {
    baseUrl: t.baseUrl,
    settings: t.settings,
    apiKey,
    upstreamModel: t.upstreamModel,
    tokenizer: t.tokenizer,
    signal,
    deadline: job.deadline,
    retries: 0,
    firstByteTimeoutMs: config().poolFirstByteTimeoutMs,
  };
  return adapter(call, 'chat', decisionBody(job.body, t.settings), job.publicModel, undefined);
}
