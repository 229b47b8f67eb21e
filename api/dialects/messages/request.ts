import type { CanonicalMessage, CanonicalPart, CanonicalRequest, CanonicalTool, CanonicalToolChoice } from '../canonical';
import { CANONICAL_THINKING, thinkingBlocksOf } from '../../../workers/providers/anthropic/thinking';
import { isRecord } from '../../../shared/is-record';
import { ApiError } from '../../../shared/errors/ApiError';
import { fromLastCompaction } from './compaction';

type JsonFormat = { type: string; schema?: Record<string, unknown> };

/** Anthropic content blocks the translator understands (the Messages API request). */
export type MessagesBlock = Record<string, unknown> & { type: string };
export interface MessagesMessage {
  /** `system` messages are in the current Anthropic SDK types (`SystemMessageParam`); Claude Code sends them. */
  role: 'user' | 'assistant' | 'system';
  content: string | MessagesBlock[];
}
export interface MessagesRequest {
  model: string;
  max_tokens?: number;
  messages: MessagesMessage[];
  system?: string | MessagesBlock[];
  tools?: Array<{ name: string; description?: string; input_schema?: Record<string, unknown>; type?: string; defer_loading?: boolean; strict?: boolean }>;
  tool_choice?: { type: 'auto' | 'any' | 'tool' | 'none'; name?: string; disable_parallel_tool_use?: boolean };
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id?: string | null };
  stream?: boolean;
  thinking?: unknown;
  output_config?: { effort?: string | null; format?: JsonFormat | null };
  /** The structured-outputs beta's name for `output_config.format` (deprecated, still in the SDK's beta types). */
  output_format?: JsonFormat | null;
  [extra: string]: unknown;
}

type Source = { type: string; media_type?: string; data?: string; url?: string; file_id?: string };

function imagePart(source: Source): CanonicalPart {
  if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'url') return { type: 'image_url', image_url: { url: String(source.url) } };
  throw new ApiError(400, 'invalid_request', `Image source type '${source.type}' is not supported here.`);
}

/**
 * A document as canonical parts. Its `title` and `context` (Anthropic: context the model may use but
 * not cite) lead as text; a text source, and the text blocks of a `content` source (a string or
 * text/image blocks), are text; images inside a `content` source are image parts; a PDF is a file.
 */
function documentParts(block: MessagesBlock): CanonicalPart[] {
  const source = block.source as Source & { content?: unknown };
  const title = typeof block.title === 'string' && block.title ? block.title : undefined;
  const context = typeof block.context === 'string' && block.context ? block.context : undefined;
  const lead = [title, context].filter((t): t is string => !!t);
  const text = (body: string): CanonicalPart => ({ type: 'text', text: [...lead, body].join('\n\n') });
  const withLead = (part: CanonicalPart): CanonicalPart[] => (context ? [{ type: 'text', text: context }, part] : [part]);
  if (source.type === 'text') return [text(String(source.data ?? ''))];
  if (source.type === 'base64') {
    return withLead({ type: 'file', file: { filename: title ?? 'document.pdf', file_data: `data:${source.media_type};base64,${source.data}` } });
  }
  if (source.type === 'url') return withLead({ type: 'file', file: { filename: title ?? String(source.url), file_data: String(source.url) } });
  if (source.type === 'content' && typeof source.content === 'string') return [text(source.content)];
  if (source.type === 'content' && Array.isArray(source.content)) {
    const blocks = source.content as MessagesBlock[];
    const images = blocks.filter((b) => b.type === 'image').map((b) => imagePart(b.source as Source));
    return [text(blocks.filter((b) => b.type === 'text').map((b) => String(b.text)).join('\n')), ...images];
  }
  throw new ApiError(400, 'invalid_request', `Document source type '${source.type}' is not supported here.`);
}

/**
 * A `search_result` block (Anthropic's SearchResultBlockParam: `source`, `title`, text `content`)
 * as the text a model without Anthropic's search results reads: title, source, then its text.
 */
export function searchResultText(block: MessagesBlock): string {
  const texts = Array.isArray(block.content) ? (block.content as MessagesBlock[]).map((b) => String(b.text ?? '')) : [];
  return [`${String(block.title)}\n${String(block.source)}`, texts.join('\n')].join('\n\n');
}

/** A user-side block (text, image, document, search result) as canonical parts; `cacheHints` keeps a text block's `cache_control`. */
function userParts(block: MessagesBlock, cacheHints = false): CanonicalPart[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: String(block.text), ...(cacheHints && block.cache_control ? { cache_control: block.cache_control } : {}) }];
    case 'image':
      return [imagePart(block.source as Source)];
    case 'document':
      return documentParts(block);
    case 'search_result':
      return [{ type: 'text', text: searchResultText(block) }];
    default:
      return [];
  }
}

/** A tool result's content: text joined; images go to a user message right after the tool results; whether it failed (`is_error`). */
function toolResult(block: MessagesBlock): { text: string; images: CanonicalPart[]; failed: boolean } {
  const c = block.content;
  const images: CanonicalPart[] = [];
  let text = '';
  if (typeof c === 'string') text = c;
  else if (Array.isArray(c)) {
    const texts: string[] = [];
    for (const b of c as MessagesBlock[]) {
      if (b.type === 'text') texts.push(String(b.text));
      else if (b.type === 'image') images.push(imagePart(b.source as Source));
      else if (b.type === 'document') images.push(...documentParts(b));
      else if (b.type === 'search_result') texts.push(searchResultText(b));
    }
    text = texts.join('\n');
  }
  return { text, images, failed: block.is_error === true };
}

function userMessages(content: MessagesMessage['content'], cacheHints = false): CanonicalMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: CanonicalMessage[] = [];
  const parts: CanonicalPart[] = [];
  const late: CanonicalPart[] = [];
  const lateOf: string[] = [];
  for (const block of content) {
    if (block.type === 'tool_result') {
      const r = toolResult(block);
      out.push(r.failed ? { role: 'tool', tool_call_id: String(block.tool_use_id), content: r.text, is_error: true } : { role: 'tool', tool_call_id: String(block.tool_use_id), content: r.text });
      late.push(...r.images);
      lateOf.push(...r.images.map(() => String(block.tool_use_id)));
      continue;
    }
    parts.push(...userParts(block, cacheHints));
  }
  // Tool results must directly follow the assistant's tool calls; the rest of the turn comes after.
  const rest = [...late, ...parts];
  if (!rest.length) return out;
  if (late.length) out.push({ role: 'user', content: rest, tool_media: lateOf });
  else out.push({ role: 'user', content: rest.every((p) => p.type === 'text' && !('cache_control' in p)) ? rest.map((p) => (p as { text: string }).text).join('\n') : rest });
  return out;
}

function assistantMessage(content: MessagesMessage['content']): CanonicalMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const calls: NonNullable<CanonicalMessage['tool_calls']> = [];
  for (const block of content) {
    if (block.type === 'text') texts.push(String(block.text));
    else if (block.type === 'tool_use') {
      calls.push({ id: String(block.id), type: 'function', function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) } });
    }
    // thinking and redacted_thinking blocks are the turn's `thinking_blocks` below
  }
  const m: CanonicalMessage = { role: 'assistant', content: texts.length ? texts.join('') : calls.length ? null : '' };
  // signed ones go back to an Anthropic-native upstream, unchanged and in order; no other upstream is sent them (docs/dialects.md)
  const thinking = thinkingBlocksOf(content);
  if (thinking.length) m.thinking_blocks = thinking;
  if (calls.length) m.tool_calls = calls;
  return m;
}

function blocksText(content: string | MessagesBlock[]): string {
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? String(b.text) : '')).join('\n');
}

/** The system prompt: `system`, then every `system`-role message's text in the order they appear. */
function systemText(req: MessagesRequest): string | undefined {
  const parts = [req.system, ...req.messages.filter((m) => m.role === 'system').map((m) => m.content)].filter((c) => c !== undefined).map((c) => blocksText(c!));
  const text = parts.filter(Boolean).join('\n\n');
  return text || undefined;
}

/** Anthropic's tool-search server tools: the translated path offers every tool directly instead. */
const TOOL_SEARCH = /^tool_search_tool_(regex|bm25)(_\d{8})?$/;

function tools(req: MessagesRequest): CanonicalTool[] | undefined {
  if (!req.tools?.length) return undefined;
  const offered = req.tools.filter((t) => !TOOL_SEARCH.test(String(t.type)));
  if (!offered.length) return undefined;
  // `defer_loading` only keeps a tool out of the upstream's context until a tool search finds it.
  return offered.map((t) => {
    if (t.type && t.type !== 'custom') {
      throw new ApiError(400, 'unsupported_tool', `Tool type '${t.type}' is not supported on this model.`);
    }
    return {
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.input_schema ?? { type: 'object', properties: {} },
        ...(t.strict === true ? { strict: true } : {}),
      },
    };
  });
}

function toolChoice(c: MessagesRequest['tool_choice']): CanonicalToolChoice | undefined {
  if (!c) return undefined;
  switch (c.type) {
    case 'any':
      return 'required';
    case 'tool':
      return { type: 'function', function: { name: String(c.name) } };
    case 'none':
      return 'none';
    default:
      return 'auto';
  }
}

/** A `system` array with `cache_control` on a text block, as text parts that keep it. */
function cachedSystem(req: MessagesRequest): CanonicalMessage | undefined {
  if (!Array.isArray(req.system) || !req.system.some((b) => b.cache_control)) return undefined;
  const inMessages = req.messages.filter((m) => m.role === 'system').map((m) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content));
  return { role: 'system', content: [req.system, ...inMessages].flat().filter((b) => b.type === 'text').flatMap((b) => userParts(b, true)) };
}

/**
 * Anthropic's own refusals of empty content, made before a lane or upstream is used: a user or
 * assistant turn with no content (`""` or `[]`), except a final assistant turn (a prefill), is
 * "all messages must have non-empty content except for the optional final assistant message"; a
 * text block with empty text is "text content blocks must be non-empty". `system` messages are
 * not checked (their text joins the system prompt).
 */
export function refuseEmptyContent(req: MessagesRequest): void {
  const last = req.messages.length - 1;
  req.messages.forEach((m, i) => {
    if (m.role === 'system') return;
    const empty = typeof m.content === 'string' ? m.content === '' : m.content.length === 0;
    if (empty && !(i === last && m.role === 'assistant')) {
      throw new ApiError(400, 'invalid_request', `messages.${i}: all messages must have non-empty content except for the optional final assistant message`, { param: `messages[${i}].content` });
    }
    if (typeof m.content === 'string') return;
    m.content.forEach((b, j) => {
      if (b.type === 'text' && b.text === '') {
        throw new ApiError(400, 'invalid_request', `messages.${i}.content.${j}: text content blocks must be non-empty`, { param: `messages[${i}].content[${j}].text` });
      }
    });
  });
}

const asBlocks = (c: MessagesMessage['content']): MessagesBlock[] => (typeof c !== 'string' ? c : c ? [{ type: 'text', text: c }] : []);

/**
 * The user and assistant turns with same-role neighbours combined into one turn, as Anthropic does
 * ("consecutive user or assistant turns in your request will be combined into a single turn"), so
 * that an assistant's tool calls are one canonical message and their results follow it directly.
 * `system` messages are left out (they join the system prompt), so turns around one combine too.
 */
function combinedTurns(messages: MessagesMessage[]): MessagesMessage[] {
  const out: MessagesMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const prev = out.at(-1);
    if (prev?.role === m.role) prev.content = [...asBlocks(prev.content), ...asBlocks(m.content)];
    else out.push({ role: m.role, content: m.content });
  }
  return out;
}

/**
 * Messages request → canonical chat request. `stream` is set by the caller of the dispatch.
 * `cacheHints`: keep `cache_control` on text blocks, for upstreams that honour it through the
 * canonical path (Bedrock Claude models, docs/providers/bedrock.md); others never see it.
 */
export function messagesToCanonical(req: MessagesRequest, opts: { cacheHints?: boolean } = {}): CanonicalRequest {
  const messages: CanonicalMessage[] = [];
  const cachedSys = opts.cacheHints ? cachedSystem(req) : undefined;
  const sys = cachedSys ? undefined : systemText(req);
  if (cachedSys) messages.push(cachedSys);
  if (sys) messages.push({ role: 'system', content: sys });
  // a `compaction` block stands for everything before it (compaction.ts)
  for (const m of combinedTurns(fromLastCompaction(req.messages))) {
    if (m.role === 'assistant') messages.push(assistantMessage(m.content));
    else messages.push(...userMessages(m.content, opts.cacheHints));
  }
  const out: CanonicalRequest = { model: req.model, messages };
  if (req.max_tokens !== undefined) out.max_completion_tokens = req.max_tokens;
  const t = tools(req);
  if (t) out.tools = t;
  const choice = toolChoice(req.tool_choice);
  if (choice && t) out.tool_choice = choice;
  if (req.tool_choice?.disable_parallel_tool_use && t) out.parallel_tool_calls = false;
  if (req.stop_sequences?.length) out.stop = req.stop_sequences;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.top_k !== undefined) out.top_k = req.top_k;
  if (req.metadata?.user_id) out.user = req.metadata.user_id;
  if (req.output_config?.effort) out.reasoning_effort = req.output_config.effort;
  // for whichever deployment is picked: an Anthropic-native or Bedrock Claude one sends it, others leave it out
  if (isRecord(req.thinking)) out[CANONICAL_THINKING] = req.thinking;
  const format = req.output_config?.format ?? req.output_format;
  // Anthropic's structured outputs always hold to the schema: OpenAI's strict mode is the same promise
  if (format?.type === 'json_schema') out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema, strict: true } };
  return out;
}
