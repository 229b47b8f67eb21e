import type { Capabilities } from '../db/models/Model';

export interface CatalogSeed {
  publicId: string;
  upstreamName: string;
  displayName: string;
  capabilities: Capabilities;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  limits?: Record<string, unknown>;
  config?: Record<string, unknown>;
  prices?: Record<string, number>;
  tokenizer?: string;
  /** Which seeded simulator provider serves it: OpenAI-compatible (default), Anthropic-native or Cohere (rerank). */
  provider?: 'openai' | 'anthropic' | 'cohere';
}

/**
 * The default catalog, served by the upstream simulator: at least one model of each capability.
 * Prices are micro-dollars per unit. Later issues refine their models' limits and config.
 */
export const DEFAULT_CATALOG: CatalogSeed[] = [
  {
    publicId: 'sim-chat',
    upstreamName: 'sim-chat-1',
    displayName: 'Simulated Chat',
    capabilities: { chat: true, vision: true },
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    prices: { input_token: 0.5, output_token: 1.5 },
  },
  {
    publicId: 'sim-chat-mini',
    upstreamName: 'sim-chat-mini-1',
    displayName: 'Simulated Chat Mini',
    capabilities: { chat: true },
    contextWindow: 32_000,
    maxOutputTokens: 4_096,
    prices: { input_token: 0.1, output_token: 0.3 },
  },
  {
    publicId: 'sim-claude',
    upstreamName: 'sim-claude-1',
    displayName: 'Simulated Claude (Anthropic-native upstream)',
    capabilities: { chat: true, vision: true },
    contextWindow: 200_000,
    maxOutputTokens: 8_192,
    prices: { input_token: 3, output_token: 15 },
    tokenizer: 'cl100k_base',
    provider: 'anthropic',
  },
  {
    publicId: 'sim-embed',
    upstreamName: 'sim-embed-1',
    displayName: 'Simulated Embeddings',
    capabilities: { embeddings: true },
    contextWindow: 512,
    maxOutputTokens: null,
    limits: { max_batch_size: 64, max_input_tokens: 512, dimensions: 256, supports_dimensions: true },
    prices: { input_token: 0.02 },
  },
  {
    publicId: 'sim-rerank',
    upstreamName: 'sim-rerank-1',
    displayName: 'Simulated Rerank',
    capabilities: { rerank: true },
    contextWindow: 512,
    maxOutputTokens: null,
    limits: { max_input_tokens: 512, max_documents: 1000 },
    prices: { search_unit: 1000 },
    provider: 'cohere',
  },
  {
    publicId: 'sim-image',
    upstreamName: 'sim-image-1',
    displayName: 'Simulated Image',
    capabilities: { image_generation: true },
    contextWindow: null,
    maxOutputTokens: null,
    // Published by GET /v1/images/models and enforced on generations and edits (docs/images.md).
    limits: {
      sizes: ['256x256', '512x512', '768x768', '1024x1024', '512x768', '768x512', '1024x1536', '1536x1024'],
      default_size: '1024x1024',
      steps: { min: 1, max: 50, default: 20 },
      guidance: { min: 0, max: 20, default: 7 },
      output_formats: ['png', 'jpeg', 'webp'],
      default_output_format: 'png',
      max_n: 4,
      max_prompt_chars: 4000,
      max_negative_prompt_chars: 2000,
      max_edit_images: 4,
    },
    // Per image, by size (`image_<W>x<H>`); `image` prices any size without its own row.
    prices: {
      image: 20_000,
      image_256x256: 8_000,
      image_512x512: 12_000,
      image_768x768: 16_000,
      image_1024x1024: 20_000,
      image_512x768: 14_000,
      image_768x512: 14_000,
      image_1024x1536: 30_000,
      image_1536x1024: 30_000,
    },
  },
  {
    publicId: 'sim-whisper',
    upstreamName: 'sim-whisper-1',
    displayName: 'Simulated Transcription',
    capabilities: { transcription: true },
    contextWindow: null,
    maxOutputTokens: null,
    config: { audio_config: { max_duration_seconds: 3600, supports_word_timestamps: true } },
    prices: { audio_second: 100 },
  },
  {
    publicId: 'sim-decide',
    upstreamName: 'sim-chat-1',
    displayName: 'Simulated Decision',
    capabilities: { decision: true, vision: true },
    contextWindow: 128_000,
    maxOutputTokens: null,
    // The request cap counts image bytes (base64) too, so it sits above the 8 MiB raw-body cap.
    limits: { max_state_bytes: 262_144, max_request_bytes: 9_437_184, max_questions: 64, max_input_tokens: 100_000 },
    config: { logprobs: true, image_tokens: 765 },
    prices: { input_token: 0.5 },
  },
  {
    publicId: 'sim-decide-mini',
    upstreamName: 'sim-chat-mini-1',
    displayName: 'Simulated Decision Mini (text only)',
    capabilities: { decision: true },
    contextWindow: 32_000,
    maxOutputTokens: null,
    limits: { max_state_bytes: 65_536, max_request_bytes: 262_144, max_questions: 32, max_input_tokens: 24_000 },
    config: { logprobs: true },
    prices: { input_token: 0.1 },
  },
];
