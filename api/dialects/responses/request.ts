import type { CanonicalMessage, CanonicalPart, CanonicalRequest, CanonicalTool, CanonicalToolChoice } from '../canonical';
import { ApiError } from '../../../shared/errors/ApiError';
import { flatFunctions, prefixedName } from './namespaces';

export type ResponsesItem = Record<string, unknown> & { type?: string; role?: string };
export interface ResponsesRequest {
  model: string;
  input: string | ResponsesItem[];
  instructions?: string | null;
  tools?: Array<Record<string, unknown> & { type: string }>;
  tool_choice?: 'auto' | 'none' | 'required' | { type: string; name?: string };
  parallel_tool_calls?: boolean;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stream?: boolean;
  previous_response_id?: string | null;
  store?: boolean;
  metadata?: Record<string, string> | null;
  user?: string;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  text?: { format?: { type: string; name?: string; schema?: unknown; strict?: boolean; description?: string } };
  [extra: string]: unknown;
}

const invalid = (message: string) => new ApiError(400, 'invalid_request', message);

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

/** Responses input items → canonical messages (function calls join the assistant turn before them). */
export function itemsToMessages(input: ResponsesRequest['input']): CanonicalMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: CanonicalMessage[] = [];
  for (const item of input) {
    const type = item.type ?? 'message';
    if (type === 'message') {
      out.push({ role: role(item.role), content: content(item.content) });
    } else if (type === 'function_call') {
      // A call inside a namespace goes upstream under the flattened name the upstream was offered.
      const name = typeof item.namespace === 'string' && item.namespace ? prefixedName(item.namespace, String(item.name)) : String(item.name);
      const call = { id: String(item.call_id), type: 'function' as const, function: { name, arguments: String(item.arguments ?? '') } };
      const last = out.at(-1);
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      const output = typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? '');
      out.push({ role: 'tool', tool_call_id: String(item.call_id), content: output });
    } else if (type === 'reasoning' || type === 'tool_search_call' || type === 'tool_search_output' || type === 'additional_tools') {
      // Reasoning items are the model's own and not sent back upstream; a tool search is moot when
      // every tool is offered directly, and additional tools join the request's tools (requestTools).
      continue;
    } else {
      throw invalid(`Input item type '${type}' is not supported.`);
    }
  }
  return out;
}

/**
 * Every tool the request offers: `tools`, then those of `additional_tools` input items. A hosted
 * (server-executed) `tool_search` is dropped: the upstream is offered every tool directly, deferred
 * ones (`defer_loading`) included. A client-executed one would need the client to load tools the
 * upstream never sees, so it is refused.
 */
function requestTools(req: ResponsesRequest): Array<Record<string, unknown> & { type: string }> {
  const added = Array.isArray(req.input) ? req.input.filter((i) => i.type === 'additional_tools').flatMap((i) => (Array.isArray(i.tools) ? (i.tools as Array<Record<string, unknown> & { type: string }>) : [])) : [];
  return [...(req.tools ?? []), ...added].filter((t) => {
    if (t.type !== 'tool_search') return true;
    if (t.execution === 'client') throw new ApiError(400, 'unsupported_tool', "A client-executed 'tool_search' tool is not supported on this model; declare the tools directly (defer_loading is accepted).");
    return false;
  });
}

function tools(req: ResponsesRequest): CanonicalTool[] | undefined {
  const all = flatFunctions(requestTools(req));
  if (!all.length) return undefined;
  return all.map((t) => {
    if (t.type !== 'function') throw new ApiError(400, 'unsupported_tool', `Tool type '${t.type}' is not supported; use function tools.`);
    const fn: CanonicalTool['function'] = { name: String(t.name) };
    if (typeof t.description === 'string') fn.description = t.description;
    fn.parameters = (t.parameters as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} };
    if (typeof t.strict === 'boolean') fn.strict = t.strict;
    return { type: 'function', function: fn };
  });
}

function toolChoice(c: ResponsesRequest['tool_choice']): CanonicalToolChoice | undefined {
  if (c === undefined) return undefined;
  if (typeof c === 'string') return c;
  if (c.type === 'function' && c.name) return { type: 'function', function: { name: c.name } };
  throw invalid(`tool_choice type '${c.type}' is not supported.`);
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
  if (typeof req.max_output_tokens === 'number') out.max_tokens = req.max_output_tokens;
  if (typeof req.temperature === 'number') out.temperature = req.temperature;
  if (typeof req.top_p === 'number') out.top_p = req.top_p;
  if (typeof req.user === 'string' && req.user) out.user = req.user;
  if (req.reasoning?.effort) out.reasoning_effort = req.reasoning.effort;
  const format = req.text?.format;
  if (format?.type === 'json_schema') {
    out.response_format = { type: 'json_schema', json_schema: { name: format.name ?? 'output', schema: format.schema, ...(format.strict !== undefined ? { strict: format.strict } : {}) } };
  } else if (format?.type === 'json_object') out.response_format = { type: 'json_object' };
  return { canonical: out, turn };
}
