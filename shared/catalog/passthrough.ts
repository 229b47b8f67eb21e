import type { ProviderSettings } from '../db/models/Provider';
import { PRESETS, presetOf, type Preset } from './presets';

/**
 * The hosts of services whose vendor checks the key it is sent and bills that key's own account: a
 * provider at one of them (or a subdomain: `x.openai.azure.com`, `bedrock-runtime.us-east-1.amazonaws.com`)
 * takes callers' own keys by default. The hosted presets' hosts are added below.
 */
const VENDOR_HOSTS = [
  'api.openai.com',
  'api.anthropic.com',
  'api.cohere.com',
  'api.cohere.ai',
  'generativelanguage.googleapis.com',
  'aiplatform.googleapis.com',
  'openai.azure.com',
  'cognitiveservices.azure.com',
  'services.ai.azure.com',
  'amazonaws.com',
  ...Object.values(PRESETS as Record<string, Preset>).flatMap((p) => (p.selfHosted || !p.baseUrl ? [] : [new URL(p.baseUrl).hostname])),
];

/** Whether `baseUrl` is an https URL of a vendor's own service (VENDOR_HOSTS). */
export function vendorHosted(baseUrl: string | null | undefined): boolean {
  let url: URL;
  try {
    url = new URL(String(baseUrl ?? ''));
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase();
  return url.protocol === 'https:' && VENDOR_HOSTS.some((h) => host === h || host.endsWith(`.${h}`));
}

/**
 * Whether callers may bring their own provider key to a provider (passthrough, docs/api.md): its
 * `passthrough` setting when it has one, else its default: allowed only where the vendor's own
 * service checks the key and bills its account (a base URL on a vendor's host, not a self-hosted
 * preset); refused for anything else — a vLLM or Ollama server, or any OpenAI-compatible server the
 * operator runs — which may check no key, so a made-up key would use the operator's upstream at no
 * charge to any budget.
 */
export function passthroughAllowed(p: { kind?: string; settings?: ProviderSettings | null; passthrough?: boolean | null; baseUrl?: string | null }): boolean {
  if (p.passthrough !== null && p.passthrough !== undefined) return p.passthrough;
  // a bedrock provider without a base URL is served at its region's AWS endpoint
  if (p.kind === 'bedrock' && !p.baseUrl) return true;
  return !presetOf(p.settings?.preset)?.selfHosted && vendorHosted(p.baseUrl);
}
