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
  /** Which seeded simulator provider serves it: OpenAI-compatible (default) or Anthropic-native. */
  provider?: 'openai' | 'anthropic';
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
  },
  {
    publicId: 'sim-image',
    upstreamName: 'sim-image-1',
    displayName: 'Simulated Image',
    capabilities: { image_generation: true },
    contextWindow: null,
    maxOutputTokens: null,
    limits: { sizes: ['256x256', '512x512', '1024x1024'], steps: { min: 1, max: 50, default: 20 }, output_formats: ['png', 'jpeg', 'webp'], max_n: 4 },
    prices: { image: 20_000 },
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
