import type { ProviderSettings } from '../db/models/Provider';
import { presetOf } from './presets';

/**
 * Whether callers may bring their own provider key to a provider (passthrough, docs/api.md): its
 * `passthrough` setting when it has one, else its default: refused for a self-hosted preset's (vllm,
 * ollama), whose server checks no key (a made-up key would use the operator's upstream at no charge),
 * allowed for the rest, whose vendor bills the key's own account.
 */
export function passthroughAllowed(p: { settings?: ProviderSettings | null; passthrough?: boolean | null }): boolean {
  return p.passthrough ?? !presetOf(p.settings?.preset)?.selfHosted;
}
