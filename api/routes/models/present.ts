import type { CatalogModel } from '../../../shared/catalog/catalog';
import { effortLevels } from '../../../shared/catalog/effort-levels';
import type { ThinkingForms } from '../../dispatch/route';

const CAPABILITY_KEYS = ['chat', 'embeddings', 'rerank', 'image_generation', 'transcription', 'vision', 'decision'] as const;

/** Every capability key, true or false, so clients need not guess at missing ones. */
export function capabilitiesOf(m: CatalogModel): Record<(typeof CAPABILITY_KEYS)[number], boolean> {
  return Object.fromEntries(CAPABILITY_KEYS.map((k) => [k, !!m.capabilities[k]])) as never;
}

/** Which client APIs can use the model through this gateway. */
export function compatibilityOf(m: CatalogModel): Record<string, boolean> {
  const c = m.capabilities;
  return {
    openai_chat_completions: !!c.chat,
    // on Anthropic-native upstreams legacy completions go through the chat translation
    openai_completions: !!c.chat,
    anthropic_messages: !!c.chat,
    openai_responses: !!c.chat,
    openai_embeddings: !!c.embeddings,
    cohere_rerank: !!c.rerank,
    openai_images: !!c.image_generation,
    openai_audio_transcriptions: !!c.transcription,
    systemone: !!c.decision,
    background_variant: !!(c.chat || c.image_generation),
  };
}

/** Per-model bounds published in the listing: decision models' state, request, question and token limits. */
function publishedLimits(m: CatalogModel): { limits?: Record<string, unknown> } {
  return m.capabilities.decision ? { limits: m.limits } : {};
}

/** OpenAI's model-object fields, shared by every OpenAI-shaped listing (models, embeddings, rerank, images). */
export function openAiModelHeader(m: CatalogModel) {
  return {
    id: m.publicId,
    object: 'model' as const,
    created: Math.floor(m.createdAt.getTime() / 1000),
    owned_by: m.provider.name,
    display_name: m.displayName ?? m.publicId,
  };
}

/** The chat-completions list entry: OpenAI's fields plus the gateway's documented extras. */
export function openAiModel(m: CatalogModel) {
  return {
    ...openAiModelHeader(m),
    context_window: m.contextWindow,
    max_output_tokens: m.maxOutputTokens,
    capabilities: capabilitiesOf(m),
    compatibility: compatibilityOf(m),
    ...publishedLimits(m),
  };
}

const supported = (yes: boolean) => ({ supported: yes });

/**
 * Anthropic's `ModelCapabilities` (@anthropic-ai/sdk 1.12 and 1.16, resources/models.d.ts) as the gateway
 * serves the model through the messages dialect. `native`: every deployment of the model and of its
 * fallbacks is Anthropic-native (allNativeMessages), so the request goes upstream unchanged (context
 * management, code execution are the upstream's); `thinking` is reported when every deployment is a
 * Claude upstream (Anthropic-native or Claude on Bedrock: a translated request carries it to the
 * deployment drawn), with the forms all of them take (thinkingForms); otherwise the request is translated: code execution has no effect, and the gateway
 * applies tool result clearing and compaction itself. Web search is run by the gateway on
 * every chat model (docs/native-search.md). A model that is not a chat model supports none.
 */
function anthropicCapabilities(m: CatalogModel, allNative: boolean, thinking: ThinkingForms | undefined) {
  const c = m.capabilities;
  const chat = !!c.chat;
  const native = chat && allNative;
  // a list of levels in the config (shared/catalog/effort-levels.ts) is refused outside it, native or not
  const levels = effortLevels(m.config);
  const effort = chat && (native || levels !== false) && (!levels || levels.length > 0);
  const level = (l: string) => supported(effort && (!levels || levels.includes(l)));
  return {
    batch: supported(chat),
    citations: supported(false),
    code_execution: supported(native),
    // tool result clearing and compaction are applied by the gateway on a translated upstream (docs/dialects.md)
    context_management: { supported: chat, clear_thinking_20251015: native ? supported(true) : null, clear_tool_uses_20250919: supported(chat), compact_20260112: supported(chat) },
    effort: { supported: effort, low: level('low'), medium: level('medium'), high: level('high'), max: level('max'), xhigh: level('xhigh') },
    image_input: supported(chat && !!c.vision),
    pdf_input: supported(chat && !!c.vision),
    server_tools: { supported: chat, web_search: supported(chat), code_execution: supported(native) },
    structured_outputs: supported(chat && c.json_schema !== false),
    // the caller's thinking reaches every deployment drawn when each is a Claude upstream (dispatch/route.ts thinkingForms)
    thinking: { supported: chat && !!thinking, types: { adaptive: supported(chat && !!thinking?.adaptive), enabled: supported(chat && !!thinking?.enabled) } },
  };
}

/**
 * The messages-dialect entry: Anthropic's `ModelInfo` fields, and beside them the fields the spec
 * fixes for every catalog entry (context limits, the capabilities map, compatibility). The spec's
 * boolean capabilities and Anthropic's capability objects share `capabilities` (their keys differ),
 * so SDK code reading `capabilities.image_input.supported` works and the spec's map stays.
 */
export function anthropicModel(m: CatalogModel, allNative: boolean, thinking: ThinkingForms | undefined) {
  return {
    type: 'model' as const,
    id: m.publicId,
    display_name: m.displayName ?? m.publicId,
    created_at: m.createdAt.toISOString(),
    max_input_tokens: m.contextWindow,
    max_tokens: m.maxOutputTokens,
    lifecycle: 'active' as const,
    deprecated_at: null,
    retires_at: null,
    line: null,
    context_window: m.contextWindow,
    max_output_tokens: m.maxOutputTokens,
    capabilities: { ...capabilitiesOf(m), ...anthropicCapabilities(m, allNative, thinking) },
    compatibility: compatibilityOf(m),
    ...publishedLimits(m),
  };
}
