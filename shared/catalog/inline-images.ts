import type { ProviderSettings } from '../db/models/Provider';
import { presetOf } from './presets';
import { vendorHosted } from './passthrough';

/**
 * Whether a deployment on this provider gets a request's image URLs inlined (downloaded by the
 * gateway through the SSRF guard, sent as data URLs) when its pool entry does not say
 * (`inline_image_urls`, shared/catalog/deployments.ts). On for a server the operator runs: an
 * `openai` (OpenAI-compatible: vLLM, Ollama, TGI, llama.cpp, a proxy) or `anthropic`-shaped provider
 * whose base URL is not a vendor's own https host, or that names a self-hosted preset; such a server
 * fetches a URL from inside the operator's network (169.254.169.254, internal hosts). Off for the
 * public vendor APIs (OpenAI, Anthropic, the hosted presets, Azure), which fetch from their own
 * clouds, and for kinds that take no image URL at all (Gemini, Bedrock refuse one; Cohere).
 */
export function inlineImageUrlsDefault(p: { kind?: string; settings?: ProviderSettings | null; baseUrl?: string | null }): boolean {
  if (p.kind !== 'openai' && p.kind !== 'anthropic') return false;
  return !!presetOf(p.settings?.preset)?.selfHosted || !vendorHosted(p.baseUrl);
}
