import crypto from 'crypto';
import { parseArguments, type CanonicalCompletion, type CanonicalMessage, type CanonicalToolCall, type CanonicalUsage, type FinishReason, type ThinkingBlock } from '../canonical';
import { encryptedThinking } from './thinking-content';
import { configuredBy, type ResponsesRequest } from './request';
import { calledTool, customInput } from './offered-tools';
import { applyPatchOperation, localShellAction, shellAction } from './client-tools';
import { responsesServedTier } from '../served-tier';

export const newId = (prefix: string) => `${prefix}_${crypto.randomBytes(12).toString('hex')}`;

export type OutputItem = Record<string, unknown> & { type: string; id: string };

/** What a response echoes of its request. */
export interface ResponseFrame {
  id: string;
  createdAt: number;
  publicModel: string;
  req: ResponsesRequest;
}

/** A count an upstream reported, else 0. */
const count = (n: unknown) => (Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : 0);

export function responsesUsage(u: CanonicalUsage | undefined | null) {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    // OpenAI's document requires both: the cache writes an Anthropic or Bedrock upstream reports (cache_creation_input_tokens,
    // cacheWriteInputTokens), or an OpenAI-compatible one as chat's prompt_tokens_details.cache_write_tokens; 0 when none
    input_tokens_details: { cached_tokens: u?.prompt_tokens_details?.cached_tokens ?? 0, cache_write_tokens: count(u?.prompt_tokens_details?.cache_write_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

/** The answer was cut short (max_output_tokens, or a content filter): the Response and its last item are `incomplete`. */
export const cutShort = (finish: FinishReason | undefined) => finish === 'length' || finish === 'content_filter';

/**
 * The Response object; `status` in_progress (stream start) or from the finish reason. `served`: the
 * tier the upstream reports it served the request on (its chat answer's or chunks' `service_tier`),
 * when known (served-tier.ts).
 */
export function responseObject(f: ResponseFrame, output: OutputItem[], finish: FinishReason | 'in_progress', usage: CanonicalUsage | null | undefined, served?: unknown): Record<string, unknown> {
  const incomplete = finish === 'length' ? 'max_output_tokens' : finish === 'content_filter' ? 'content_filter' : null;
  const status = finish === 'in_progress' ? 'in_progress' : incomplete ? 'incomplete' : 'completed';
  const r = f.req;
  // the effort and format the response was made with: the request's, or the last configuration_update's (request.ts configuredBy)
  const configured = configuredBy(r);
  return {
    id: f.id,
    object: 'response',
    // openai 7.60.0's Response: null is the implicit standard program (the only one the gateway has)
    access_programs: null,
    created_at: f.createdAt,
    // OpenAI's document: "Only present when the status is `completed`" (null otherwise)
    completed_at: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    status,
    background: r.background === true,
    error: null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    instructions: r.instructions ?? null,
    // OpenAI's Response.Image, the effective policy: the gateway compresses no image context
    ...(r.image ? { image: { context_compression: 'disabled' } } : {}),
    max_output_tokens: r.max_output_tokens ?? null,
    max_tool_calls: r.max_tool_calls ?? null,
    model: f.publicModel,
    output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    conversation: r.conversation ? { id: typeof r.conversation === 'string' ? r.conversation : r.conversation.id } : null,
    // a reusable prompt is refused (request.ts, refuseUnhonoured)
    prompt: null,
    prompt_cache_key: r.prompt_cache_key ?? null,
    prompt_cache_retention: r.prompt_cache_retention ?? null,
    reasoning: { effort: configured.effort ?? null, summary: r.reasoning?.summary ?? null },
    safety_identifier: r.safety_identifier ?? null,
    // the tier the answer was served (and billed) on, as OpenAI reports it whatever was asked: the
    // upstream's when it names one of OpenAI's, else `default` (served-tier.ts)
    service_tier: responsesServedTier(served),
    store: r.store !== false,
    temperature: r.temperature ?? 1,
    // OpenAI's ResponseTextConfig as it echoes it: the format (text by default) and the verbosity (medium by default)
    text: { ...r.text, format: configured.format ?? { type: 'text' }, verbosity: r.text?.verbosity ?? 'medium' },
    tool_choice: r.tool_choice ?? 'auto',
    tools: (r.tools ?? []).map(echoedTool),
    top_logprobs: r.top_logprobs ?? 0,
    top_p: r.top_p ?? 1,
    truncation: r.truncation ?? 'disabled',
    usage: status === 'in_progress' ? null : responsesUsage(usage),
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}

/** OpenAI's approximate location as a Response echoes it: its five fields, those not given null (`country` too: the gateway assumes none). */
function echoedLocation(l: unknown): Record<string, unknown> {
  const given = (l && typeof l === 'object' ? l : {}) as Record<string, unknown>;
  return { type: 'approximate', city: given.city ?? null, country: given.country ?? null, region: given.region ?? null, timezone: given.timezone ?? null };
}

/**
 * A tool as the Response echoes it, OpenAI's defaults filled in as OpenAI's own Responses echo them
 * (the vendored openapi document's examples, and recorded OpenAI answers):
 * - `function` (FunctionTool, which requires `strict` and `parameters`): `strict` as sent, else
 *   `false`, the mode the gateway runs it in (an omitted strict is not sent upstream: non-strict
 *   function calling, OpenAI's fallback for a schema it cannot make strict); `parameters` null when not sent;
 * - `web_search` and its dated variants (WebSearchTool): `filters` (null when not sent),
 *   `search_context_size` (`medium`), `user_location` (an approximate location of five fields);
 * - `web_search_preview…` (WebSearchPreviewTool): `search_context_size` and `user_location` the same way;
 * - `namespace` (NamespaceToolParam, which requires a string `description`): `""` when not sent.
 * Other tools (custom, tool_search, apply_patch, shell, local_shell) have no such defaults in
 * OpenAI's document and are echoed as sent.
 */
export function echoedTool(t: Record<string, unknown>): Record<string, unknown> {
  const type = String(t.type);
  if (type === 'function') return { ...t, strict: typeof t.strict === 'boolean' ? t.strict : false, parameters: t.parameters ?? null };
  if (type === 'namespace') return { ...t, description: typeof t.description === 'string' ? t.description : '' };
  if (!type.startsWith('web_search')) return t;
  const preview = type.startsWith('web_search_preview');
  const out: Record<string, unknown> = preview ? { type, search_context_size: 'medium', ...t } : { type, filters: null, search_context_size: 'medium', ...t };
  out.search_context_size = t.search_context_size ?? 'medium';
  out.user_location = echoedLocation(t.user_location);
  if (!preview) out.filters = t.filters ?? null;
  return out;
}

/**
 * The Response of a stream that failed after it started, as OpenAI's `response.failed` carries it:
 * `status: "failed"`, `completed_at` and `usage` null (the document's example), `error` with a code
 * of OpenAI's ResponseErrorCode (`rate_limit_exceeded` for a 429, `server_error` otherwise) and the
 * gateway's message; an input past the model's context window keeps OpenAI's `context_length_exceeded`
 * (outside the document's enum, but what OpenAI's failed responses carry and Codex reads: a context to
 * shorten, where `server_error` is retried as it is). `output` holds what was produced before the failure.
 */
export function failedResponse(f: ResponseFrame, output: OutputItem[], e: { status: number; code?: string; message: string }, served?: unknown): Record<string, unknown> {
  const code = e.code === 'context_length_exceeded' ? e.code : e.status === 429 ? 'rate_limit_exceeded' : 'server_error';
  return { ...responseObject(f, output, 'in_progress', null, served), status: 'failed', error: { code, message: e.message } };
}

/** OpenAI's LogProb of an `output_text` part: a token, its log probability, bytes and alternatives. */
export interface LogProb {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

type ChatLogprob = { token?: unknown; logprob?: unknown; bytes?: unknown; top_logprobs?: unknown };
const bytesOf = (token: string, bytes: unknown) => (Array.isArray(bytes) ? (bytes as number[]) : [...Buffer.from(token, 'utf8')]);

/** A chat choice's `logprobs.content` (the same fields, `bytes` possibly null) → the Responses LogProbs. */
export function responsesLogprobs(chat: unknown): LogProb[] {
  const content = (chat as { content?: unknown } | null | undefined)?.content;
  if (!Array.isArray(content)) return [];
  return (content as ChatLogprob[]).map((t) => {
    const token = String(t.token ?? '');
    const tops = Array.isArray(t.top_logprobs) ? (t.top_logprobs as ChatLogprob[]) : [];
    return {
      token,
      logprob: Number(t.logprob ?? 0),
      bytes: bytesOf(token, t.bytes),
      top_logprobs: tops.map((a) => ({ token: String(a.token ?? ''), logprob: Number(a.logprob ?? 0), bytes: bytesOf(String(a.token ?? ''), a.bytes) })),
    };
  });
}

/** An `output_text` content part; the API always sends `logprobs` (empty unless asked for). */
export function outputText(text: string, annotations: unknown[] = [], logprobs: LogProb[] = []): Record<string, unknown> {
  return { type: 'output_text', text, annotations, logprobs };
}

/** One content part of an output message: text (with its log probabilities when asked for), or the model's refusal (OpenAI's RefusalContent). */
export interface MessagePart {
  type: 'output_text' | 'refusal';
  text: string;
  logprobs?: LogProb[];
}

export function contentPart(p: MessagePart): Record<string, unknown> {
  return p.type === 'refusal' ? { type: 'refusal', refusal: p.text } : outputText(p.text, [], p.logprobs ?? []);
}

export function messageItem(id: string, parts: MessagePart[], status = 'completed'): OutputItem {
  return { type: 'message', id, status, role: 'assistant', content: parts.map(contentPart) };
}

/**
 * The output item of a tool call, as the caller declared the tool (offered-tools.ts): a
 * `function_call` (with `namespace` for a namespace member), a `custom_tool_call`, an
 * `apply_patch_call`, a `shell_call`, a `local_shell_call` or a client `tool_search_call`.
 */
export function functionCallItem(id: string, call: CanonicalToolCall, status = 'completed', req?: ResponsesRequest): OutputItem {
  const t = req ? calledTool(req, call.function.name) : undefined;
  const args = call.function.arguments;
  // OpenAI's ResponseApplyPatchToolCall: status in_progress or completed only
  if (t?.kind === 'apply_patch') return { type: 'apply_patch_call', id, call_id: call.id, status: status === 'completed' ? 'completed' : 'in_progress', operation: applyPatchOperation(args) };
  // OpenAI's ResponseFunctionShellToolCall: `environment` null for the client's own (local) shell
  if (t?.kind === 'shell') return { type: 'shell_call', id, call_id: call.id, action: shellAction(args), status, environment: null };
  // OpenAI's LocalShellCall: an `exec` action
  if (t?.kind === 'local_shell') return { type: 'local_shell_call', id, call_id: call.id, status, action: localShellAction(args) };
  if (t?.kind === 'tool_search') return { type: 'tool_search_call', id, call_id: call.id, execution: 'client', arguments: parseArguments(args), status };
  const ns = t?.namespace ? { namespace: t.namespace } : {};
  if (t?.kind === 'custom') return { type: 'custom_tool_call', id, call_id: call.id, name: t.name, ...ns, input: customInput(args), status };
  return { type: 'function_call', id, call_id: call.id, name: t?.name ?? call.function.name, ...ns, arguments: args, status };
}

/**
 * OpenAI's ResponseReasoningItem for an upstream's raw reasoning (chat's `reasoning_content`: an
 * OpenAI-compatible server's, or an Anthropic thinking block): no summary, the text as one
 * `reasoning_text` part, as OpenAI reports an open-weight model's reasoning. It comes before the
 * message; sent back as input it is skipped (request.ts), never forwarded as text. An Anthropic-native
 * upstream's signed thinking (`blocks`) is always its `encrypted_content` (thinking-content.ts), so the
 * item is whole wherever it goes (the store, a conversation); the client of the create is shown it only
 * when its `include` asks (client-view.ts). Sent back, it goes to an Anthropic-native upstream as the blocks.
 */
export function reasoningItem(id: string, text: string, status = 'completed', blocks?: ThinkingBlock[]): OutputItem {
  return { type: 'reasoning', id, summary: [], content: text ? [reasoningText(text)] : [], ...(blocks?.length ? { encrypted_content: encryptedThinking(blocks) } : {}), status };
}

/** A `reasoning_text` content part of a reasoning item. */
export const reasoningText = (text: string): Record<string, unknown> => ({ type: 'reasoning_text', text });

/** The assistant turn to store for a follow-up (`previous_response_id`), with its signed thinking blocks whether or not the caller asked for them. */
export function assistantTurn(text: string, calls: CanonicalToolCall[], thinking: ThinkingBlock[] = []): CanonicalMessage {
  const m: CanonicalMessage = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (thinking.length) m.thinking_blocks = thinking;
  if (calls.length) m.tool_calls = calls;
  return m;
}

/**
 * Canonical chat completion → Response object, plus the assistant turn for the store. The upstream's
 * reasoning (`message.reasoning_content`) is a `reasoning` item first; the stored turn leaves its text
 * out, as a reasoning input item's text is left out (request.ts), and keeps an Anthropic-native
 * upstream's signed blocks. A refusal
 * (`message.refusal`) is a `refusal` part of the message item, after any text; the stored turn keeps
 * it as text (as a `refusal` input part is read). When the answer was cut short its last item (the
 * one cut) is `incomplete`, as OpenAI reports it. Its `service_tier` is the one the upstream reports
 * serving it on (the chat answer's), else `default`.
 */
export function canonicalToResponse(c: CanonicalCompletion, f: ResponseFrame): { response: Record<string, unknown>; assistant: CanonicalMessage } {
  const choice = c.choices[0];
  const text = choice?.message.content ?? '';
  const refusal = choice?.message.refusal ?? '';
  const calls = choice?.message.tool_calls ?? [];
  const reasoning = choice?.message.reasoning_content ?? '';
  const thinking = choice?.message.thinking_blocks ?? [];
  const output: OutputItem[] = [];
  if (reasoning || thinking.length) output.push(reasoningItem(newId('rs'), reasoning, 'completed', thinking));
  const parts: MessagePart[] = [];
  if (text) parts.push({ type: 'output_text', text, logprobs: responsesLogprobs((choice as { logprobs?: unknown }).logprobs) });
  if (refusal) parts.push({ type: 'refusal', text: refusal });
  if (parts.length) output.push(messageItem(newId('msg'), parts));
  for (const call of calls) output.push(functionCallItem(newId('fc'), call, 'completed', f.req));
  const last = output.at(-1);
  if (last && cutShort(choice?.finish_reason)) last.status = 'incomplete';
  return { response: responseObject(f, output, choice?.finish_reason ?? 'stop', c.usage, c.service_tier), assistant: assistantTurn(text + refusal, calls, thinking) };
}
