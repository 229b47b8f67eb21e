import type { CanonicalMessage, CanonicalPart, CanonicalRequest, CanonicalTool, CanonicalToolChoice } from '../canonical';
import { ApiError } from '../../../shared/errors/ApiError';
import { APPLY_PATCH, canonicalTool, choosableNames, CLIENT_TOOLS, declaresTools, LOCAL_SHELL, offeredTools, prefixedName, SHELL, TOOL_SEARCH } from './offered-tools';
import { applyPatchArguments, localShellArguments, shellArguments } from './client-tools';
import { thinkingOfEncrypted } from './thinking-content';
import type { ThinkingBlock } from '../canonical';

export type ResponsesItem = Record<string, unknown> & { type?: string; role?: string };
export interface ResponsesRequest {
  model: string;
  input: string | ResponsesItem[];
  instructions?: string | null;
  tools?: Array<Record<string, unknown> & { type: string }>;
  tool_choice?: 'auto' | 'none' | 'required' | { type: string; name?: string; mode?: string; tools?: unknown[] };
  parallel_tool_calls?: boolean;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stream?: boolean;
  previous_response_id?: string | null;
  /** OpenAI's truncation strategy: `auto` drops the oldest turns to fit the model's context window (api/routes/responses/truncation.ts). */
  truncation?: 'auto' | 'disabled' | null;
  /** OpenAI's Conversations API: the conversation the response continues and extends (its id, or `{id}`). */
  conversation?: string | { id: string } | null;
  store?: boolean;
  /** Run after the answer (`status: queued`), polled with GET and cancelled with POST .../cancel (api/routes/responses/background.ts). */
  background?: boolean | null;
  metadata?: Record<string, string> | null;
  user?: string;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  text?: { format?: { type: string; name?: string; schema?: unknown; strict?: boolean; description?: string }; verbosity?: string | null };
  include?: string[] | null;
  /** At most this many hosted tool calls (the gateway's web search) in the response. */
  max_tool_calls?: number | null;
  top_logprobs?: number | null;
  /** Hints, echoed in the Response. */
  prompt_cache_key?: string | null;
  prompt_cache_retention?: string | null;
  /** OpenAI's image context policy (`auto`, `enabled`, `disabled`): the gateway compresses no image context, so it is answered `disabled`; `enabled` is refused. */
  image?: { context_compression?: string | null } | null;
  safety_identifier?: string | null;
  service_tier?: string | null;
  [extra: string]: unknown;
}

const unsupported = (param: string, message: string) => new ApiError(400, 'unsupported_parameter', message, { param });
const given = (v: unknown) => v !== undefined && v !== null;

/**
 * Log probabilities asked for: `include: ["message.output_text.logprobs"]`, or `top_logprobs` above 0.
 * Sent upstream as chat's `logprobs: true` (and `top_logprobs`), and answered as each `output_text`
 * part's `logprobs` (response.ts, stream.ts); an upstream that has none refuses them (400 naming
 * `logprobs`; a mixed pool serves them from a deployment that has them).
 */
export function wantsLogprobs(req: Pick<ResponsesRequest, 'include' | 'top_logprobs'>): boolean {
  return (Array.isArray(req.include) && req.include.includes('message.output_text.logprobs')) || (typeof req.top_logprobs === 'number' && req.top_logprobs > 0);
}

/**
 * Fields of OpenAI's ResponseCreateParams that change the answer and that the gateway cannot honour:
 * refused 400 `unsupported_parameter` naming the field, before anything is stored, sent or billed
 * (called on the raw body, before validation, so that a `prompt` without `input` is named as such).
 * - `prompt`: a reusable prompt template kept by OpenAI (its id, version and variables): the
 *   gateway cannot resolve it, and the answer would be made without the template's instructions.
 * - `moderation`: moderated completions (results in the Response, `block` stops flagged text).
 * - `prompt_cache_options.prewarm: true`: OpenAI prepares the cache and generates no output.
 */
export function refuseUnhonoured(body: unknown): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const b = body as Record<string, unknown>;
  if (given(b.prompt)) throw unsupported('prompt', 'Reusable prompts (prompt templates kept by OpenAI) are not supported: send the instructions and input themselves.');
  if (given(b.moderation)) throw unsupported('moderation', 'Moderated responses (moderation) are not supported.');
  const cache = b.prompt_cache_options as { prewarm?: unknown } | null | undefined;
  if (cache && typeof cache === 'object' && cache.prewarm === true) {
    throw unsupported('prompt_cache_options.prewarm', 'prompt_cache_options.prewarm is not supported: every response generates its output.');
  }
  // OpenAI: "Use `enabled` to require compression support"; the gateway has none (`auto` is answered `disabled`)
  const image = b.image as { context_compression?: unknown } | null | undefined;
  if (image && typeof image === 'object' && image.context_compression === 'enabled') {
    throw unsupported('image.context_compression', 'image.context_compression "enabled" is not supported: the gateway does not compress image context.');
  }
}

const invalid = (message: string, param?: string) => new ApiError(400, 'invalid_request', message, param ? { param } : undefined);

/** Where each item of a request's `input` stood, for a refusal's `param` once the input was rearranged (compactions opened, search calls unfolded). */
const placeOf = new WeakMap<object, number>();

/** Notes the place of each item of the request's `input` (called on the body as sent, once validated). */
export function notePlaces(input: unknown): void {
  if (Array.isArray(input)) input.forEach((item, i) => item && typeof item === 'object' && placeOf.set(item as object, i));
}

/** `input[i].field` for an item of the request's own `input`; none for an item read from elsewhere (a conversation's). */
function placed(item: object, field: string): string | undefined {
  const i = placeOf.get(item);
  return i === undefined ? undefined : `input[${i}].${field}`;
}

function part(p: Record<string, unknown>): CanonicalPart {
  switch (p.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
    case 'refusal':
      return { type: 'text', text: String(p.text ?? p.refusal ?? '') };
    case 'input_image': {
      if (typeof p.image_url !== 'string') throw invalid('input_image needs an image_url (file ids are not supported).');
      return { type: 'image_url', image_url: { url: p.image_url, ...(typeof p.detail === 'string' ? { detail: p.detail } : {}) } };
    }
    case 'input_file': {
      const data = typeof p.file_data === 'string' ? p.file_data : typeof p.file_url === 'string' ? p.file_url : undefined;
      if (!data) throw invalid('input_file needs file_data or file_url (file ids are not supported).');
      return { type: 'file', file: { filename: typeof p.filename === 'string' ? p.filename : 'file', file_data: data } };
    }
    default:
      throw invalid(`Content part type '${String(p.type)}' is not supported.`);
  }
}

function content(c: unknown): string | CanonicalPart[] {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) throw invalid('A message content must be a string or an array of parts.');
  const parts = c.map((p) => part(p as Record<string, unknown>));
  return parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('') : parts;
}

function role(r: unknown): CanonicalMessage['role'] {
  if (r === 'user' || r === 'assistant' || r === 'system') return r;
  if (r === 'developer') return 'system'; // OpenAI-compatible servers do not all know `developer`
  throw invalid(`Unknown message role '${String(r)}'.`);
}

/** A call the caller echoes, under the name the upstream was offered (namespace members prefixed). */
function upstreamName(item: ResponsesItem): string {
  return typeof item.namespace === 'string' && item.namespace ? prefixedName(item.namespace, String(item.name)) : String(item.name);
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  return JSON.stringify(output ?? '');
}

const MEDIA = new Set(['input_image', 'input_file']);

/**
 * A function or custom tool's output (a string, or OpenAI's ResponseFunctionCallOutputItemList of
 * `input_text`, `input_image` and `input_file` parts, as Codex's `view_image` sends): its text for
 * the tool message, and its images and files, which a chat tool message cannot carry, for the user
 * message right after the turn's tool results (as the messages dialect sends a tool_result's images).
 */
function toolOutput(output: unknown): { text: string; media: CanonicalPart[] } {
  const parts = Array.isArray(output) ? (output as Array<Record<string, unknown> | null>) : [];
  const media = parts.filter((p) => p && MEDIA.has(String(p.type))).map((p) => part(p!));
  return { text: outputText(output), media };
}

/** An apply_patch_call_output as the model reads it: its status, and its output when it has one. */
function applyPatchResult(item: ResponsesItem): string {
  const status = item.status === 'failed' ? 'failed' : 'completed';
  return typeof item.output === 'string' && item.output ? `${status}: ${item.output}` : status;
}

/**
 * A shell_call_output as the model reads it: per command its outcome (exit code, or timed out),
 * its stdout and its stderr (each command numbered when there are several).
 */
function shellResult(output: unknown): string {
  if (typeof output === 'string') return output;
  const parts = (Array.isArray(output) ? output : []) as Array<{ stdout?: unknown; stderr?: unknown; outcome?: { type?: unknown; exit_code?: unknown } }>;
  const one = (o: (typeof parts)[number]) => {
    const outcome = o.outcome?.type === 'timeout' ? 'timed out' : `exit code ${String(o.outcome?.exit_code ?? '')}`.trim();
    const lines = [outcome];
    if (typeof o.stdout === 'string' && o.stdout) lines.push(`stdout:\n${o.stdout}`);
    if (typeof o.stderr === 'string' && o.stderr) lines.push(`stderr:\n${o.stderr}`);
    return lines.join('\n');
  };
  if (parts.length === 1) return one(parts[0]);
  return parts.map((o, i) => `command ${i + 1}: ${one(o)}`).join('\n\n');
}

/** What a client-executed tool search loaded, as the model reads it (the tools themselves are offered). */
function loadedText(tools: unknown): string {
  const names = (Array.isArray(tools) ? (tools as Array<{ name?: unknown; tools?: Array<{ name?: unknown }> }>) : []).flatMap((t) =>
    Array.isArray(t.tools) ? t.tools.map((m) => prefixedName(String(t.name), String(m.name))) : [String(t.name)],
  );
  return names.length ? `Tools loaded: ${names.join(', ')}` : 'No tools found.';
}

/**
 * Responses input items → canonical messages (tool calls join the assistant turn before them). A
 * reasoning item whose `encrypted_content` holds a Claude turn's signed thinking
 * (thinking-content.ts) opens the assistant turn that follows it, which carries the blocks
 * (`thinking_blocks`: sent to a Claude upstream, Anthropic-native or Bedrock, dropped for others).
 */
export function itemsToMessages(input: ResponsesRequest['input']): CanonicalMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: CanonicalMessage[] = [];
  let thinking: ThinkingBlock[] | undefined;
  const assistant = (m: CanonicalMessage) => {
    if (thinking) [m.thinking_blocks, thinking] = [thinking, undefined];
    out.push(m);
  };
  const call = (id: unknown, name: string, args: string) => {
    const c = { id: String(id), type: 'function' as const, function: { name, arguments: args } };
    const last = out.at(-1);
    if (last?.role === 'assistant' && !thinking) (last.tool_calls ??= []).push(c);
    else assistant({ role: 'assistant', content: null, tool_calls: [c] });
  };
  const result = (id: unknown, text: string) => out.push({ role: 'tool', tool_call_id: String(id), content: text });
  // tool outputs' images and files: a user message once the run of tool results ends (tool messages must follow their calls)
  let media: CanonicalPart[] = [];
  let mediaOf: string[] = [];
  const flush = () => {
    if (media.length) out.push({ role: 'user', content: media, tool_media: mediaOf });
    media = [];
    mediaOf = [];
  };
  for (const item of input) {
    const type = item.type ?? 'message';
    const client = item.execution === 'client';
    if (!/_output$/.test(type)) flush();
    if (type === 'message' && item.role === 'assistant') assistant({ role: 'assistant', content: content(item.content) });
    else if (type === 'message') out.push({ role: role(item.role), content: content(item.content) });
    else if (type === 'function_call') call(item.call_id, upstreamName(item), String(item.arguments ?? ''));
    else if (type === 'custom_tool_call') call(item.call_id, upstreamName(item), JSON.stringify({ input: String(item.input ?? '') }));
    else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const o = toolOutput(item.output);
      result(item.call_id, o.text);
      media.push(...o.media);
      mediaOf.push(...o.media.map(() => String(item.call_id)));
    }
    else if (type === 'apply_patch_call') call(item.call_id, APPLY_PATCH, applyPatchArguments(item.operation));
    else if (type === 'apply_patch_call_output') result(item.call_id, applyPatchResult(item));
    else if (type === 'shell_call') call(item.call_id, SHELL, shellArguments(item.action));
    else if (type === 'shell_call_output') result(item.call_id, shellResult(item.output));
    else if (type === 'local_shell_call') call(item.call_id, LOCAL_SHELL, localShellArguments(item.action));
    // OpenAI's LocalShellCallOutput names its call by `id` (the model's call id); `call_id` is read first
    else if (type === 'local_shell_call_output') result(item.call_id ?? item.id, outputText(item.output));
    else if (type === 'tool_search_call' && client) call(item.call_id ?? item.id, TOOL_SEARCH, JSON.stringify(item.arguments ?? {}));
    else if (type === 'tool_search_output' && client) result(item.call_id ?? item.id, loadedText(item.tools));
    else if (type === 'reasoning' && thinkingOfEncrypted(item.encrypted_content)) thinking = [...(thinking ?? []), ...thinkingOfEncrypted(item.encrypted_content)!];
    // Other reasoning items are the model's own and not sent back upstream; a hosted tool search is moot
    // when every tool is offered directly; additional tools join the offered tools (offered-tools.ts);
    // a configuration update sets this response's effort and format (configuredBy), it says nothing to the model.
    else if (type === 'reasoning' || type === 'tool_search_call' || type === 'tool_search_output' || type === 'additional_tools' || type === 'configuration_update') continue;
    else throw invalid(`Input item type '${type}' is not supported.`, placed(item, 'type'));
  }
  flush();
  return out;
}

type TextFormat = NonNullable<ResponsesRequest['text']>['format'];

/** The settings `configuration_update` items set: an effort (null: the model's default) and a text format, each when one set it. */
export interface Configuration {
  effort?: string | null;
  format?: TextFormat;
}

/**
 * The settings in effect after `input`'s `configuration_update` items, over `earlier` (those the
 * history's updates left in effect: api/routes/responses/configuration.ts): each setting replaced
 * only by a later update that sets it (OpenAI's ResponseConfigurationUpdateItemParam, openai 7.60.0:
 * "Each setting stays in effect until a later update replaces it.").
 */
export function updatesIn(input: ResponsesRequest['input'] | undefined, earlier?: Configuration | null): Configuration {
  const out: Configuration = Object.assign({}, earlier);
  for (const item of Array.isArray(input) ? input : []) {
    if (item?.type !== 'configuration_update') continue;
    const update = item as { reasoning?: { effort?: string | null }; text?: { format?: TextFormat } };
    if (update.reasoning && update.reasoning.effort !== undefined) out.effort = update.reasoning.effort;
    if (update.text?.format) out.format = update.text.format;
  }
  return out;
}

/**
 * The reasoning effort and text format the response is made with (and its Response echoes:
 * response.ts): the request's `reasoning.effort` and `text.format`, each replaced by the last
 * `configuration_update` that sets it, in the history (carried into the request's own fields:
 * api/routes/responses/configuration.ts) or in the input (openai 7.60.0: "An update to the
 * conversation's response configuration. … Each setting stays in effect until a later update
 * replaces it."; an effort of null goes back to the model's default). Before, such an item was
 * refused 400 as an unknown input item type.
 */
export function configuredBy(req: Pick<ResponsesRequest, 'input' | 'reasoning' | 'text'>): { effort: string | null | undefined; format: TextFormat } {
  const u = updatesIn(req.input);
  return { effort: u.effort !== undefined ? u.effort : req.reasoning?.effort, format: u.format ?? req.text?.format };
}

/**
 * The configuration updates leave in effect (the history's, then the input's: updatesIn), as one
 * `configuration_update` item, or none when no update set anything: what a compacted output keeps
 * (compact.ts), so that the effort still applies after it.
 */
export function configurationKept({ effort, format }: Configuration, id: string): ResponsesItem | undefined {
  if (effort === undefined && !format) return undefined;
  const item: ResponsesItem = { type: 'configuration_update', id };
  if (effort !== undefined) item.reasoning = { effort };
  if (format) item.text = { format };
  return item;
}

function tools(req: ResponsesRequest): CanonicalTool[] | undefined {
  const offered = offeredTools(req);
  return offered.length ? offered.map(canonicalTool) : undefined;
}

const choiceRefused = (message: string) => new ApiError(400, 'unsupported_parameter', message, { param: 'tool_choice' });
const choiceInvalid = (message: string) => new ApiError(400, 'invalid_request', message, { param: 'tool_choice' });

/**
 * `tool_choice`: a mode, a named function or custom tool, a client-run tool (`{type: 'apply_patch'}`,
 * `{type: 'shell'}`: OpenAI's ToolChoiceApplyPatch and ToolChoiceShell), or `allowed_tools`
 * (ToolChoiceAllowed: `mode` auto/required and the function, custom or client-run tools allowed) →
 * the chat API's `{type: 'allowed_tools', allowed_tools: {mode, tools}}`. `{type: 'local_shell'}` is
 * not one of OpenAI's tool choices (openai 7.60.0's ResponseCreateParams.tool_choice, the vendored
 * ToolChoiceParam): 400, as OpenAI refuses it; allowed_tools names that tool. A hosted tool's choice
 * reaches here only when that tool is not run by the gateway (hosted web search is rewritten in native.ts): 400.
 */
function toolChoice(c: ResponsesRequest['tool_choice']): CanonicalToolChoice | undefined {
  if (c === undefined) return undefined;
  if (typeof c === 'string') return c;
  if ((c.type === 'function' || c.type === 'custom') && c.name) return { type: 'function', function: { name: c.name } };
  if (c.type === LOCAL_SHELL) {
    throw choiceInvalid("tool_choice {type: 'local_shell'} is not one of OpenAI's tool choices; to force the local_shell tool, use {type: 'allowed_tools', mode: 'required', tools: [{type: 'local_shell'}]}.");
  }
  if (CLIENT_TOOLS.includes(c.type)) return { type: 'function', function: { name: c.type } };
  if (c.type === 'allowed_tools') {
    if ((c.mode !== 'auto' && c.mode !== 'required') || !Array.isArray(c.tools) || !c.tools.length) throw choiceInvalid("tool_choice of type 'allowed_tools' needs mode 'auto' or 'required' and a non-empty tools list.");
    const tools = (c.tools as Array<{ type?: unknown; name?: unknown }>).map((t) => {
      if ((t?.type === 'function' || t?.type === 'custom') && typeof t.name === 'string' && t.name) return { type: 'function' as const, function: { name: t.name } };
      if (typeof t?.type === 'string' && CLIENT_TOOLS.includes(t.type)) return { type: 'function' as const, function: { name: t.type } };
      throw choiceRefused(`tool_choice.tools may list function, custom, apply_patch, shell and local_shell tools (and hosted web search, which the gateway runs); '${String(t?.type)}' is not supported.`);
    });
    return { type: 'allowed_tools', allowed_tools: { mode: c.mode, tools } };
  }
  if (/^web_search/.test(c.type)) throw choiceInvalid(`tool_choice names the hosted tool '${c.type}', which is not in tools.`);
  throw choiceRefused(`tool_choice of type '${c.type}' is not supported: the gateway does not run that hosted tool.`);
}

/**
 * A `tool_choice` that needs a tool the request does not declare: without any (`tools` absent or
 * empty, none loaded by an input item), OpenAI's Responses API refuses `required` and a named tool in
 * these words, naming `tool_choice`, and answers `auto` and `none` in text (docs/dialects.md); with
 * tools, a function choice naming none of them is refused in the same words (vLLM pull request 40399,
 * checked against OpenAI's API). Chat completions refuse every choice without tools
 * (api/routes/chat/schema.ts).
 */
export function refuseChoiceWithoutItsTool(req: Pick<ResponsesRequest, 'tool_choice' | 'tools' | 'input'>): void {
  const c = req.tool_choice;
  if (c === undefined || c === null || c === 'auto' || c === 'none') return;
  if (declaresTools(req)) {
    if (c !== 'required' && c.type === 'function' && !choosableNames(req).has(String(c.name))) throw choiceInvalid("Tool choice 'function' not found in 'tools' parameter.");
    return;
  }
  if (c === 'required') throw choiceInvalid("Tool choice 'required' must be specified with 'tools' parameter.");
  // allowed_tools (OpenAI's answer without tools is not known) and local_shell (not a tool choice at all: toolChoice) keep their own rules
  if (c.type !== 'allowed_tools' && c.type !== LOCAL_SHELL) throw choiceInvalid(`Tool choice '${c.type}' not found in 'tools' parameter.`);
}

/**
 * Responses request → canonical chat request. `history` is the stored conversation of the
 * `previous_response_id` chain (without instructions: they are not carried over, as in OpenAI's API).
 */
export function responsesToCanonical(req: ResponsesRequest, history: CanonicalMessage[] = []): { canonical: CanonicalRequest; turn: CanonicalMessage[] } {
  const turn = itemsToMessages(req.input);
  const messages: CanonicalMessage[] = [];
  if (req.instructions) messages.push({ role: 'system', content: req.instructions });
  messages.push(...history, ...turn);
  const out: CanonicalRequest = { model: req.model, messages };
  const t = tools(req);
  if (t) out.tools = t;
  const choice = toolChoice(req.tool_choice);
  if (choice && t) out.tool_choice = choice;
  if (typeof req.parallel_tool_calls === 'boolean' && t) out.parallel_tool_calls = req.parallel_tool_calls;
  if (typeof req.max_output_tokens === 'number') out.max_completion_tokens = req.max_output_tokens;
  if (typeof req.temperature === 'number') out.temperature = req.temperature;
  if (typeof req.top_p === 'number') out.top_p = req.top_p;
  if (typeof req.user === 'string' && req.user) out.user = req.user;
  const configured = configuredBy(req);
  if (configured.effort) out.reasoning_effort = configured.effort;
  if (wantsLogprobs(req)) {
    out.logprobs = true;
    if (typeof req.top_logprobs === 'number' && req.top_logprobs > 0) out.top_logprobs = req.top_logprobs;
  }
  const format = configured.format;
  if (format?.type === 'json_schema') {
    out.response_format = { type: 'json_schema', json_schema: { name: format.name ?? 'output', schema: format.schema, ...(format.strict !== undefined ? { strict: format.strict } : {}) } };
  } else if (format?.type === 'json_object') out.response_format = { type: 'json_object' };
  return { canonical: out, turn };
}
