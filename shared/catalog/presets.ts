/**
 * OpenAI-compatible services a provider of kind `openai` can name with `preset` (docs/providers/presets.md,
 * which gives the source of every entry). Data only: the OpenAI adapter applies it
 * (workers/providers/openai/preset.ts), the catalog file and the management API take `base_url`
 * from it when the entry omits one.
 */
export interface Preset {
  /** The service's base URL (what `/chat/completions` is appended to); none for self-hosted servers. */
  baseUrl?: string;
  /** Chat fields the service answers with an error: refused with 400 `unsupported_parameter` instead. */
  refuses: string[];
  /** `n` above 1: the service refuses or ignores it (one choice comes back), so it is refused. */
  singleChoice?: boolean;
  /** The service answers 400 to a message's `name`: refused as `messages[].name`. */
  refusesMessageName?: boolean;
  /** The one output cap the service reads: the other one of the pair is renamed to it (unset: both are read). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /**
   * How a stream reports usage: `stream_options` (asked with `stream_options.include_usage`, as
   * OpenAI does) or `last_chunk` (always sent in the final chunk; `stream_options` is not sent).
   */
  streamUsage: 'stream_options' | 'last_chunk';
  /**
   * The field the service puts reasoning text in (message and delta). `reasoning` is answered as
   * the canonical `reasoning_content` (and an input assistant turn's `reasoning_content` is sent as
   * `reasoning`); `reasoning_content` is the canonical field already.
   */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /** The usage field the service reports cached prompt tokens in, read as `prompt_tokens_details.cached_tokens`. */
  cachedTokensField?: string;
  /**
   * A server the operator runs, which checks no key: callers may not bring their own key to it
   * unless its provider says so (`passthrough`, shared/catalog/passthrough.ts).
   */
  selfHosted?: true;
}

export const PRESETS = {
  groq: { baseUrl: 'https://api.groq.com/openai/v1', refuses: ['logprobs', 'logit_bias', 'top_logprobs'], singleChoice: true, refusesMessageName: true, streamUsage: 'stream_options', reasoningField: 'reasoning' },
  mistral: { baseUrl: 'https://api.mistral.ai/v1', refuses: ['logit_bias', 'logprobs', 'top_logprobs'], maxTokensField: 'max_tokens', streamUsage: 'last_chunk' },
  deepseek: { baseUrl: 'https://api.deepseek.com/v1', refuses: ['logit_bias'], singleChoice: true, maxTokensField: 'max_tokens', streamUsage: 'stream_options', reasoningField: 'reasoning_content', cachedTokensField: 'prompt_cache_hit_tokens' },
  together: { baseUrl: 'https://api.together.xyz/v1', refuses: [], maxTokensField: 'max_tokens', streamUsage: 'last_chunk', reasoningField: 'reasoning' },
  fireworks: { baseUrl: 'https://api.fireworks.ai/inference/v1', refuses: [], maxTokensField: 'max_tokens', streamUsage: 'last_chunk', reasoningField: 'reasoning_content' },
  xai: { baseUrl: 'https://api.x.ai/v1', refuses: [], streamUsage: 'stream_options', reasoningField: 'reasoning_content' },
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1', refuses: [], maxTokensField: 'max_tokens', streamUsage: 'last_chunk', reasoningField: 'reasoning' },
  vllm: { selfHosted: true, refuses: [], streamUsage: 'stream_options', reasoningField: 'reasoning' },
  ollama: { selfHosted: true, baseUrl: 'http://localhost:11434/v1', refuses: ['logit_bias'], maxTokensField: 'max_tokens', streamUsage: 'stream_options', reasoningField: 'reasoning' },
} satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];
/** The presets that give a default base URL (self-hosted servers have none). */
export const PRESETS_WITH_URL = PRESET_NAMES.filter((n) => (PRESETS as Record<string, Preset>)[n].baseUrl);

export function presetOf(name: string | undefined): Preset | undefined {
  return name && Object.prototype.hasOwnProperty.call(PRESETS, name) ? (PRESETS as Record<string, Preset>)[name] : undefined;
}
