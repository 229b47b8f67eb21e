import crypto from 'crypto';
import { isRecord } from '../../../shared/is-record';
import { parseArguments, type CanonicalCompletion, type CanonicalUsage, type FinishReason } from '../canonical';
import { anthropicServedTier, type AnthropicTier } from '../served-tier';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'compaction' | 'model_context_window_exceeded';

export function messageId(): string {
  return `msg_${crypto.randomBytes(12).toString('hex')}`;
}

/** An id for a tool call the upstream sent without one (unique, unlike an index). */
export function toolUseId(): string {
  return `toolu_${crypto.randomBytes(12).toString('hex')}`;
}

/** Anthropic's pattern for a `tool_use` id; it refuses a conversation holding another ("tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"). */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * The `tool_use` id of an upstream's tool call: its own when Anthropic would take it back, else one of
 * the gateway's (toolUseId). OpenAI-compatible servers make ids such as `functions.Read:0` (Kimi) or
 * `Bash:12`; a client that keeps them (Claude Code's history) and later sends the conversation to a
 * Claude model was refused there on every turn.
 */
export function anthropicToolId(id: string | null | undefined): string {
  return id && TOOL_USE_ID.test(id) ? id : toolUseId();
}

/**
 * finish_reason → stop_reason. OpenAI reports a matched stop sequence as `stop` too, so it is `end_turn`;
 * an answer that carried a refusal (`refused`) and ended on its own is `refusal`. An answer with tool calls is `tool_use` when the upstream said `stop` or nothing: OpenAI does so when
 * the tool choice is forced, and older vLLM/Ollama always; the SDK's tool runner runs tools on
 * `tool_use` only.
 */
export function stopReason(finish: FinishReason | undefined, hasToolCalls = false, refused = false): StopReason {
  if (hasToolCalls && (finish === 'stop' || finish === null || finish === undefined)) return 'tool_use';
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return refused ? 'refusal' : 'end_turn';
  }
}

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** The cache writes by TTL (SDK `CacheCreation`); Anthropic's answers always carry it, zeros when nothing was written. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /**
   * Anthropic's answers always say which tier served them: `standard`, or the one an OpenAI-compatible
   * upstream reports serving the request on, as Anthropic names it (served-tier.ts anthropicServedTier).
   */
  service_tier: AnthropicTier;
  /** Where inference ran (SDK 1.17 `Usage.inference_geo: string | null`): the gateway cannot say where a translated upstream ran, so Anthropic's `not_available`. */
  inference_geo: 'not_available';
  /** Anthropic's `output_tokens_details` (SDK 1.12's to 1.17's `OutputTokensDetails | null`): reasoning tokens, when the upstream counted them; else null. */
  output_tokens_details: { thinking_tokens: number } | null;
  /** SDK 1.17 `ServerToolUsage | null`: null when no server tool ran (the gateway's web search loop sets its counts, native.ts nativeUsage). */
  server_tool_use: { web_search_requests: number; web_fetch_requests: number } | null;
  /** SDK 1.17 `speed: 'standard' | 'fast' | null`: the gateway has no fast mode on a translated upstream. */
  speed: 'standard';
}

/**
 * Canonical usage → Anthropic's. Anthropic counts cached input apart from `input_tokens`; OpenAI
 * includes it in prompt_tokens. Every field of SDK 1.17's `Usage` is there, its required-nullable
 * ones included, as in Anthropic's own answers (JSON and message_start, recorded by Claude Code and
 * in api.anthropic.com probes: `"cache_creation":{"ephemeral_5m_input_tokens":0,
 * "ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard","inference_geo":"not_available"`;
 * `inference_geo` is `not_available` where Anthropic does not report a geography, `global` or `us`
 * where it does, docs "Data residency"). Cache writes are those the upstream reported (`prompt_tokens_details.cache_write_tokens`:
 * a Bedrock upstream's cacheWriteInputTokens, an OpenAI-compatible one's), counted apart from
 * `input_tokens` too and under the default 5-minute lifetime (the upstream does not say which); 0 when none.
 * `served`: the OpenAI tier the upstream reports serving it on (its `service_tier`), when it names one.
 */
export function messagesUsage(u: CanonicalUsage | undefined | null, served?: unknown): MessagesUsage {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const w = u?.prompt_tokens_details?.cache_write_tokens;
  const written = Number.isSafeInteger(w) && (w as number) > 0 ? (w as number) : 0;
  const thinking = u?.completion_tokens_details?.reasoning_tokens;
  return {
    input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - cached - written),
    output_tokens: u?.completion_tokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    cache_creation: { ephemeral_5m_input_tokens: written, ephemeral_1h_input_tokens: 0 },
    service_tier: anthropicServedTier(served),
    inference_geo: 'not_available',
    output_tokens_details: typeof thinking === 'number' ? { thinking_tokens: thinking } : null,
    server_tool_use: null,
    speed: 'standard',
  };
}

/**
 * message_delta's usage (SDK 1.17 `MessageDeltaUsage`: the cumulative totals, and its required-nullable
 * `output_tokens_details` and `server_tool_use`, null when there is nothing to say). The SDK's
 * accumulated message takes each of them only when not null (lib/MessageStream.js), so a null never
 * overwrites message_start's.
 */
export function deltaUsage(u: MessagesUsage): Record<string, unknown> {
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    output_tokens_details: u.output_tokens_details,
    server_tool_use: u.server_tool_use,
  };
}

/**
 * The stop sequence that ended an answer, from vLLM's per-choice `stop_reason` (the matched stop
 * string; a token id or null otherwise), when it is one of the caller's `stop_sequences`.
 */
export function matchedStop(choice: unknown, stopSequences: string[] | undefined): string | null {
  const s = (choice as { stop_reason?: unknown } | undefined)?.stop_reason;
  return typeof s === 'string' && !!stopSequences?.includes(s) ? s : null;
}

/**
 * Whether an answer cut at `length` was cut by the model's context window, not by `max_tokens`: the
 * choice's `native_finish_reason` (OpenRouter's name for the upstream's own stop reason, which the
 * Anthropic and Bedrock adapters set to `model_context_window_exceeded` when Anthropic or Converse
 * said so; chat's finish_reason has only `length` for both).
 */
export function windowExceeded(choice: unknown): boolean {
  return (choice as { native_finish_reason?: unknown } | undefined)?.native_finish_reason === 'model_context_window_exceeded';
}

/** Anthropic's RefusalStopDetails (SDK 1.16): the policy category and a human-readable explanation, each null when there is none. */
export interface RefusalStopDetails {
  type: 'refusal';
  category: string | null;
  explanation: string | null;
}

/**
 * A refusal's `stop_details`: an Anthropic upstream's own, category and explanation as it gave them
 * (carried on the choice by the worker's adapter, workers/providers/anthropic/from-messages.ts
 * refusalDetailsOf); else the upstream's refusal message (OpenAI's `message.refusal`, "The refusal
 * message generated by the model") as its `explanation` (SDK 1.16: "Human-readable explanation of the
 * refusal"), category null, as no upstream but Anthropic names one of Anthropic's categories; both
 * null when the upstream said nothing (a bare `content_filter`).
 */
export function refusalDetails(choice: unknown, refusal: string | null | undefined): RefusalStopDetails {
  const d = (choice as { stop_details?: Partial<RefusalStopDetails> } | undefined)?.stop_details;
  if (d?.type === 'refusal') return { type: 'refusal', category: d.category ?? null, explanation: d.explanation ?? null };
  return { type: 'refusal', category: null, explanation: refusal || null };
}

/** How an answer stopped: SDK 1.17 Message and message_delta `stop_reason`, `stop_sequence`, `stop_details: RefusalStopDetails | null`. */
export interface Stop {
  stop_reason: StopReason;
  stop_sequence: string | null;
  stop_details: RefusalStopDetails | null;
}

/** The stop of an answer that ends after its compaction block (`pause_after_compaction`). */
export const PAUSED_STOP: Stop = { stop_reason: 'compaction', stop_sequence: null, stop_details: null };

/**
 * `stop_reason` and `stop_sequence`: `stop_sequence` when the upstream said which of the caller's
 * sequences matched; `model_context_window_exceeded` (SDK 1.16 StopReason) for a `length` the context
 * window made (`windowExceeded`), else `max_tokens`. `stop_details` is always there, as in Anthropic's
 * answers ("This is `null` when the `stop_reason` has no additional detail to report", SDK 1.17; its
 * recorded answers carry `"stop_details":null`, JSON, message_start and message_delta): a `refusal`'s
 * is `details` (refusalDetails); clients that explain a refusal from it found nothing there before,
 * and the SDK's accumulated stream, which copies message_delta's `stop_details` as it is, had it
 * undefined for every other stop reason.
 */
export function stopOf(
  finish: FinishReason | undefined,
  hasToolCalls: boolean,
  matched: string | null,
  refused: boolean,
  window: boolean,
  details: RefusalStopDetails,
): Stop {
  if (matched && finish === 'stop' && !hasToolCalls && !refused) return { stop_reason: 'stop_sequence', stop_sequence: matched, stop_details: null };
  if (window && finish === 'length') return { stop_reason: 'model_context_window_exceeded', stop_sequence: null, stop_details: null };
  const stop_reason = stopReason(finish, hasToolCalls, refused);
  return { stop_reason, stop_sequence: null, stop_details: stop_reason === 'refusal' ? details : null };
}

/**
 * An Anthropic Message with every field SDK 1.17's `Message` types as required, its nullable ones
 * as Anthropic sends them when they do not apply: `container: null` (no container tool ran; the
 * gateway runs none), `stop_details` (stopOf), `diagnostics: null` (the gateway does no prompt-cache
 * diagnosis). api.anthropic.com answers `"content":[],"container":null,"stop_reason":"max_tokens",
 * "stop_sequence":null,"stop_details":null,"usage":{...}` and its message_start carries
 * `"diagnostics":null` too. `stop` null: message_start's message, which has no stop reason yet.
 */
export function anthropicMessage(id: string, model: string, content: unknown[], stop: Stop | null, usage: MessagesUsage): Record<string, unknown> {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    container: null,
    stop_reason: stop ? stop.stop_reason : null,
    stop_sequence: stop ? stop.stop_sequence : null,
    stop_details: stop ? stop.stop_details : null,
    usage,
    diagnostics: null,
  };
}

/** message_delta's `delta` (SDK 1.17 `RawMessageDeltaEvent.Delta`): the stop, and `container: null` (no container tool ran). */
export function stopDelta(s: Stop): Record<string, unknown> {
  return { stop_reason: s.stop_reason, stop_sequence: s.stop_sequence, stop_details: s.stop_details, container: null };
}

/**
 * What an answer shows of an upstream's unsigned reasoning (an OpenAI-compatible upstream's
 * `reasoning_content`), by the request's `thinking`: `text`, a thinking block with the reasoning;
 * `empty`, the block with its text left out, as Anthropic answers `display: "omitted"` ("thinking
 * content is redacted but a signature is returned", SDK 1.16 ThinkingConfigEnabled/Adaptive
 * `display`; Claude Code asks for it); `none`, no block at all, when thinking is not on (`thinking`
 * absent, `disabled`, or `between_tools`, which turns up-front thinking off): Anthropic answers
 * without thinking blocks then, and a client reading `content[0].text` found the reasoning there.
 * Only `enabled` and `adaptive` turn thinking on. A Claude upstream's signed blocks are its own
 * answer and are shown as it sent them (a Claude model may think by default: Anthropic's
 * ThinkingConfigParam, "what happens when you omit `thinking` depend[s] on the model").
 */
export type ReasoningShown = 'text' | 'empty' | 'none';
export function reasoningShown(thinking: unknown): ReasoningShown {
  if (!isRecord(thinking) || (thinking.type !== 'enabled' && thinking.type !== 'adaptive')) return 'none';
  return thinking.display === 'omitted' ? 'empty' : 'text';
}

/**
 * Canonical chat completion → Anthropic Message, reporting the public model id. An OpenAI refusal
 * (`message.refusal`) is a text block with its text, and stop_reason `refusal` (Anthropic's own for
 * a declined request). A Claude upstream's thinking (Anthropic-native or Bedrock) comes with its
 * signatures (and its redacted_thinking blocks), so the client can send it back to either; other
 * reasoning is a thinking block with an empty signature when the request turned thinking on (`reasoning`: reasoningShown).
 * `usage.service_tier` is the tier the upstream reports serving it on, as Anthropic names it (served-tier.ts).
 */
export function canonicalToMessage(c: CanonicalCompletion, publicModel: string, id = messageId(), stopSequences?: string[], reasoning: ReasoningShown = 'none'): Record<string, unknown> {
  const choice = c.choices[0];
  const msg = choice?.message ?? {};
  const content: Array<Record<string, unknown>> = [];
  // a Claude upstream's signed (and redacted) blocks as they were; other reasoning unsigned (reasoningShown): only with thinking on, its text left out when `display` is `omitted`
  if (msg.thinking_blocks?.length) content.push(...msg.thinking_blocks);
  else if (msg.reasoning_content && reasoning !== 'none') content.push({ type: 'thinking', thinking: reasoning === 'empty' ? '' : msg.reasoning_content, signature: '' });
  const text = (msg.content ?? '') + (msg.refusal ?? '');
  if (text) content.push({ type: 'text', text });
  for (const call of msg.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: anthropicToolId(call.id), name: call.function.name, input: parseArguments(call.function.arguments) });
  }
  const stop = stopOf(choice?.finish_reason, (msg.tool_calls?.length ?? 0) > 0, matchedStop(choice, stopSequences), !!msg.refusal, windowExceeded(choice), refusalDetails(choice, msg.refusal));
  return anthropicMessage(id, publicModel, content, stop, messagesUsage(c.usage, c.service_tier));
}
