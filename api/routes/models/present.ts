import type { CatalogModel } from '../../../shared/catalog/catalog';

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

/** The messages-dialect entry (Anthropic's Models API), with the same extras. */
export function anthropicModel(m: CatalogModel) {
  return {
    type: 'model' as const,
    id: m.publicId,
    display_name: m.displayName ?? m.publicId,
    created_at: m.createdAt.toISOString(),
    context_window: m.contextWindow,
    max_output_tokens: m.maxOutputTokens,
    capabilities: capabilitiesOf(m),
    compatibility: compatibilityOf(m),
    ...publishedLimits(m),
  };
}
