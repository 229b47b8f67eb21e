import { effortLevels } from '../../shared/catalog/effort-levels';
import type { ThinkingBlock } from '../../workers/providers/anthropic/thinking';

export type { ThinkingBlock };

/**
 * The canonical chat request and result: OpenAI's chat-completions shape (DESIGN section 4).
 * Only the parts the dialect translators read or write are typed; the rest is passed along.
 */
export type CanonicalPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'file'; file: { filename?: string; file_data?: string; file_id?: string } };

export interface CanonicalToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface CanonicalMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string | CanonicalPart[] | null;
  tool_calls?: CanonicalToolCall[];
  tool_call_id?: string;
  /** Reasoning text of an assistant turn (the de-facto field of OpenAI-compatible reasoning servers). */
  reasoning_content?: string;
  /** An Anthropic-native turn's signed thinking blocks, in order, sent back unchanged to such an upstream (ThinkingBlock). */
  thinking_blocks?: ThinkingBlock[];
  /**
   * A user message that carries tool results' images and files (which a chat tool message cannot):
   * the `tool_call_id` each of its first content parts came from, in order. An Anthropic or Bedrock
   * upstream gets those parts inside their tool result (workers/providers/tool-results.ts); an
   * OpenAI-compatible one gets the message without this field.
   */
  tool_media?: string[];
  /**
   * A tool message whose result is an error (the messages dialect's `tool_result.is_error`): Anthropic's
   * `is_error`, Converse's `status: "error"`, Gemini's `response.error`; its text prefixed `Error: `
   * for an OpenAI-compatible upstream (workers/providers/tool-results.ts).
   */
  is_error?: boolean;
}


export interface CanonicalTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type CanonicalToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { type: 'function'; function: { name: string } }
  /** ChatCompletionAllowedToolChoice: the model may use only these tools, in this mode. */
  | { type: 'allowed_tools'; allowed_tools: { mode: 'auto' | 'required'; tools: Array<{ type: 'function'; function: { name: string } }> } };

export interface CanonicalRequest {
  model: string;
  messages: CanonicalMessage[];
  tools?: CanonicalTool[];
  tool_choice?: CanonicalToolChoice;
  parallel_tool_calls?: boolean;
  /** The output cap, under OpenAI's current name (`max_tokens` is deprecated and refused by o-series models). */
  max_completion_tokens?: number;
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop?: string[];
  user?: string;
  response_format?: Record<string, unknown>;
  stream?: boolean;
  /** The messages dialect's `thinking`, for a Claude deployment only (workers/providers/anthropic/thinking.ts CANONICAL_THINKING). */
  anthropic_thinking?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface CanonicalUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  /** `cache_write_tokens`: input written to the upstream's prompt cache (Anthropic's cache_creation_input_tokens), when it reports any. */
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call' | null;

export interface CanonicalCompletion {
  id?: string;
  model?: string;
  choices: Array<{
    index?: number;
    /** `refusal`: the model's refusal text (OpenAI's ChatCompletionMessage.refusal), null otherwise. */
    message: { role?: string; content?: string | null; refusal?: string | null; tool_calls?: CanonicalToolCall[]; reasoning_content?: string | null; thinking_blocks?: ThinkingBlock[] };
    finish_reason: FinishReason;
  }>;
  usage?: CanonicalUsage;
  /** The tier an OpenAI-compatible upstream reports it served the request on (its `service_tier`), when it names one: served-tier.ts. */
  service_tier?: string | null;
}

export interface CanonicalChunk {
  id?: string;
  choices?: Array<{
    index?: number;
    delta?: {
      role?: string;
      content?: string | null;
      refusal?: string | null;
      reasoning_content?: string | null;
      /** Each signed thinking block whole once its signature arrived (Anthropic's signature_delta), or a redacted one. */
      thinking_blocks?: ThinkingBlock[];
      tool_calls?: Array<{ index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: FinishReason;
  }>;
  usage?: CanonicalUsage | null;
  /** The tier an OpenAI-compatible upstream reports it served the request on (OpenAI's chunks name it on every one): served-tier.ts. */
  service_tier?: string | null;
}

/**
 * The canonical request for one model: `reasoning_effort` (mapped from the messages dialect's
 * `output_config.effort` and the responses dialect's `reasoning.effort`) is left out when the model's
 * config says its upstream refuses it (`models.config.reasoning_effort: false`) or lists levels
 * without it (the dialects' request handlers refuse such a level first: refuseEffortLevel; what is
 * left is a request the gateway makes itself, a compaction or a count).
 */
export function forModel<T extends CanonicalRequest>(c: T, config: Record<string, unknown> | undefined): T {
  const levels = effortLevels(config);
  if (levels === false || (levels && typeof c.reasoning_effort === 'string' && !levels.includes(c.reasoning_effort))) delete c.reasoning_effort;
  return c;
}

/** Tool-call arguments as an object; a model that wrote broken JSON gets its text kept under `_raw`. */
export function parseArguments(args: string | undefined): Record<string, unknown> {
  if (!args || !args.trim()) return {};
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { _raw: args };
  }
}

/** Tool-call arguments that are whole JSON: a streamed call's arguments are written to their end (a call being written keeps parallel calls' waiting). */
export function completeJson(s: string): boolean {
  if (!s.trim()) return false;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** Text of canonical content (string or parts). */
export function canonicalText(content: CanonicalMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** Where a conversation's leading system and developer messages (its instructions) end. */
export function instructionsEnd(messages: CanonicalMessage[]): number {
  let end = 0;
  while (end < messages.length && (messages[end].role === 'system' || messages[end].role === 'developer')) end++;
  return end;
}

/** Two usages added up (a request's passes: a server-side compaction's and the answer's). */
export function addUsage(a: CanonicalUsage | undefined | null, b: CanonicalUsage | undefined | null): CanonicalUsage | undefined {
  if (!a) return b ?? undefined;
  if (!b) return a;
  const prompt = (a.prompt_tokens ?? 0) + (b.prompt_tokens ?? 0);
  const completion = (a.completion_tokens ?? 0) + (b.completion_tokens ?? 0);
  const [pa, pb] = [a.prompt_tokens_details, b.prompt_tokens_details];
  const written = pa?.cache_write_tokens !== undefined || pb?.cache_write_tokens !== undefined ? { cache_write_tokens: (pa?.cache_write_tokens ?? 0) + (pb?.cache_write_tokens ?? 0) } : {};
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: Object.assign({ cached_tokens: (pa?.cached_tokens ?? 0) + (pb?.cached_tokens ?? 0) }, written),
    completion_tokens_details: { reasoning_tokens: (a.completion_tokens_details?.reasoning_tokens ?? 0) + (b.completion_tokens_details?.reasoning_tokens ?? 0) },
  };
}
