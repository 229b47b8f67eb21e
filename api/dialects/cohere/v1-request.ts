import Joi from 'joi';
import { ApiError } from '../../../shared/errors/ApiError';
import type { CanonicalMessage, CanonicalRequest, CanonicalTool, CanonicalToolCall } from '../canonical';
import { CITATION_MODES, documentsMessage, withSampling } from './request';

type Json = Record<string, unknown>;

/** A tool call as Cohere's v1 chat has it: no id, a name and its parameters. */
export interface CohereV1ToolCall {
  name: string;
  parameters: Json;
}
interface ToolResult {
  call: CohereV1ToolCall;
  outputs: Json[];
}
/** A message of a v1 `chat_history`. */
export interface CohereV1Message {
  role: 'USER' | 'CHATBOT' | 'SYSTEM' | 'TOOL';
  message?: string;
  tool_calls?: CohereV1ToolCall[];
  tool_results?: ToolResult[];
}

/** Cohere's v1 chat request (`POST /v1/chat`, `CohereClient.chat` / `chatStream`), as the gateway reads it. */
export interface CohereV1ChatRequest {
  message: string;
  model?: string;
  stream?: boolean;
  preamble?: string;
  chat_history?: CohereV1Message[];
  documents?: Array<Record<string, string>>;
  tools?: Array<{ name: string; description: string; parameter_definitions?: Record<string, { type: string; description?: string; required?: boolean }> }>;
  tool_results?: ToolResult[];
  response_format?: { type: 'text' | 'json_object'; schema?: Json };
  temperature?: number;
  max_tokens?: number;
  k?: number;
  p?: number;
  seed?: number;
  stop_sequences?: string[];
  frequency_penalty?: number;
  presence_penalty?: number;
}

const toolCall = Joi.object({ name: Joi.string().min(1).required(), parameters: Joi.object().unknown(true).required() }).unknown(true);
const toolResult = Joi.object({ call: toolCall.required(), outputs: Joi.array().items(Joi.object().unknown(true)).required() }).unknown(true);
/**
 * A `chat_history` turn. Cohere's ChatMessage (USER, SYSTEM, CHATBOT) requires a non-empty `message`
 * ("all elements in history must have a message"); a CHATBOT turn that made tool calls may leave it
 * empty here (the calls are its content).
 */
const historyMessage = Joi.object({
  role: Joi.string().valid('USER', 'CHATBOT', 'SYSTEM', 'TOOL').required(),
  message: Joi.when('role', {
    is: 'TOOL',
    then: Joi.string().allow(''),
    otherwise: Joi.when('tool_calls', { is: Joi.array().min(1).required(), then: Joi.string().allow(''), otherwise: Joi.string().min(1).required() }),
  }),
  tool_calls: Joi.array().items(toolCall),
  tool_results: Joi.array().items(toolResult),
}).unknown(true);

/** What needs a search connector, a server-side conversation or Cohere's own prompt format: refused, naming the field. */
const refused = (field: string, why: string) => Joi.any().custom((v, h) => (v === undefined || v === null || v === false || (Array.isArray(v) && !v.length) ? v : h.message({ custom: `'${field}' is not supported on this gateway: ${why}.` })));

/**
 * Cohere's v1 ChatRequest. `connectors`, `search_queries_only`, `conversation_id` and `raw_prompting`
 * are refused (the gateway runs no Cohere connector, keeps no v1 conversation and sends no raw prompt);
 * `prompt_truncation`, `citation_quality`, `max_input_tokens`, `force_single_step` and `safety_mode`
 * are accepted and ignored, typed as Cohere's document types them (its enums), so a request Cohere
 * refuses is refused here too.
 */
export const cohereV1ChatSchema = Joi.object({
  message: Joi.string().allow('').required(),
  model: Joi.string().min(1),
  stream: Joi.boolean(),
  preamble: Joi.string().allow(''),
  chat_history: Joi.array().items(historyMessage),
  documents: Joi.array().items(Joi.object().pattern(Joi.string(), Joi.string().allow(''))),
  tools: Joi.array().items(
    Joi.object({
      name: Joi.string().min(1).required(),
      description: Joi.string().allow('').required(),
      parameter_definitions: Joi.object().pattern(Joi.string(), Joi.object({ type: Joi.string().required(), description: Joi.string().allow(''), required: Joi.boolean() }).unknown(true)),
    }).unknown(true),
  ),
  tool_results: Joi.array().items(toolResult),
  response_format: Joi.object({ type: Joi.string().valid('text', 'json_object').required(), schema: Joi.object().unknown(true) }).unknown(true),
  // Cohere's document (cohere-openapi.yaml, v1 and v2 chat): minimum 0, maximum 1
  temperature: Joi.number().min(0).max(1),
  max_tokens: Joi.number().integer().min(1),
  k: Joi.number().integer().min(0).max(500),
  p: Joi.number().min(0.01).max(0.99),
  seed: Joi.number().integer().min(0),
  stop_sequences: Joi.array().items(Joi.string()).max(5),
  frequency_penalty: Joi.number().min(0).max(1),
  presence_penalty: Joi.number().min(0).max(1),
  // accepted and ignored, typed as Cohere's document has them
  prompt_truncation: Joi.string().valid('OFF', 'AUTO', 'AUTO_PRESERVE_ORDER'),
  citation_quality: Joi.string().valid(...CITATION_MODES),
  max_input_tokens: Joi.number().integer(),
  force_single_step: Joi.boolean(),
  safety_mode: Joi.string().valid('CONTEXTUAL', 'STRICT', 'NONE'),
  connectors: refused('connectors', 'it runs no Cohere connector'),
  search_queries_only: refused('search_queries_only', 'it runs no Cohere connector'),
  conversation_id: refused('conversation_id', 'it keeps no v1 conversation; send chat_history'),
  raw_prompting: refused('raw_prompting', "models here take messages, not Cohere's raw prompt"),
}).unknown(true);

/** A v1 parameter type (Python-style: `str`, `int`, `List[str]`, …) as a JSON schema type. */
function jsonType(t: string): Json {
  const s = t.trim().toLowerCase();
  if (s === 'str' || s === 'string') return { type: 'string' };
  if (s === 'int' || s === 'integer') return { type: 'integer' };
  if (s === 'float' || s === 'number') return { type: 'number' };
  if (s === 'bool' || s === 'boolean') return { type: 'boolean' };
  if (s.startsWith('list') || s.startsWith('array')) return { type: 'array' };
  if (s.startsWith('dict') || s === 'object') return { type: 'object' };
  return {};
}

function v1Tool(t: NonNullable<CohereV1ChatRequest['tools']>[number]): CanonicalTool {
  const defs = Object.entries(t.parameter_definitions ?? {});
  const properties = Object.fromEntries(defs.map(([name, d]) => [name, d.description ? { ...jsonType(d.type), description: d.description } : jsonType(d.type)]));
  const required = defs.filter(([, d]) => d.required).map(([name]) => name);
  return { type: 'function', function: { name: t.name, description: t.description, parameters: required.length ? { type: 'object', properties, required } : { type: 'object', properties } } };
}

/** The id a v1 tool call gets in the canonical request: its place in the conversation (v1 calls have none). */
export const v1CallId = (n: number) => `call_${n}`;

/**
 * Builds the canonical conversation of a v1 request. A CHATBOT turn's tool calls get ids in order;
 * tool results (a TOOL message's, or the request's `tool_results`) answer the open calls of the same
 * name and parameters, the first not yet answered. A result no open call matches gets its call added
 * to the last CHATBOT turn when only tool results came after it, else to an assistant turn of its own
 * before it. An open call no result answered by the next turn is left out of its turn (a turn left
 * with nothing is dropped): OpenAI-compatible upstreams take no call without its result.
 */
class V1Conversation {
  readonly messages: CanonicalMessage[] = [];
  private calls = 0;
  private turn: CanonicalMessage | undefined;
  private open: Array<{ id: string; key: string }> = [];

  private closeOpen(): void {
    const turn = this.turn;
    if (turn) {
      const unanswered = new Set(this.open.map((o) => o.id));
      turn.tool_calls = turn.tool_calls?.filter((c) => !unanswered.has(c.id));
      if (!turn.tool_calls?.length) delete turn.tool_calls;
      if (!turn.tool_calls && !turn.content) this.messages.splice(this.messages.indexOf(turn), 1);
    }
    this.open = [];
    this.turn = undefined;
  }

  text(role: 'system' | 'user', content: string): void {
    this.closeOpen();
    this.messages.push({ role, content });
  }

  chatbot(m: CohereV1Message): void {
    this.closeOpen();
    const turn: CanonicalMessage = { role: 'assistant', content: m.message || null };
    this.messages.push(turn);
    this.turn = turn;
    for (const c of m.tool_calls ?? []) this.addCall(turn, c);
    if (!turn.tool_calls && !turn.content) this.closeOpen();
  }

  private addCall(turn: CanonicalMessage, c: CohereV1ToolCall): void {
    const call: CanonicalToolCall = { id: v1CallId(this.calls++), type: 'function', function: { name: c.name, arguments: JSON.stringify(c.parameters ?? {}) } };
    (turn.tool_calls ??= []).push(call);
    this.open.push({ id: call.id, key: keyOf(c) });
  }

  results(results: ToolResult[]): void {
    for (const r of results) {
      const key = keyOf(r.call);
      let at = this.open.findIndex((o) => o.key === key);
      if (at < 0) {
        const turn = this.turn;
        if (turn && this.messages.slice(this.messages.indexOf(turn) + 1).every((m) => m.role === 'tool')) this.addCall(turn, r.call);
        else {
          this.closeOpen();
          const own: CanonicalMessage = { role: 'assistant', content: null };
          this.messages.push(own);
          this.turn = own;
          this.addCall(own, r.call);
        }
        at = this.open.length - 1;
      }
      const [o] = this.open.splice(at, 1);
      this.messages.push({ role: 'tool', tool_call_id: o.id, content: JSON.stringify(r.outputs) });
    }
  }

  end(): CanonicalMessage[] {
    this.closeOpen();
    return this.messages;
  }
}

const keyOf = (c: CohereV1ToolCall) => `${c.name}\n${JSON.stringify(c.parameters ?? {})}`;

/**
 * Cohere v1 chat → the canonical (OpenAI chat) request: `preamble` as the system message, then
 * `documents` (as v2's, a system message), `chat_history` (USER, CHATBOT with its tool calls, SYSTEM,
 * TOOL results), the request's `tool_results`, and `message` as the last user turn when it is not
 * empty; tools from their `parameter_definitions`, `response_format` (a schema as OpenAI's
 * `json_schema`), `max_tokens`, `stop_sequences`, `temperature`, `p` as `top_p`, `k` as `top_k`,
 * `seed`, the penalties. `model` is the caller's (required here: the gateway has no default chat model).
 */
export function cohereV1ToCanonical(b: CohereV1ChatRequest & { model: string }): CanonicalRequest {
  const c = new V1Conversation();
  if (b.preamble) c.text('system', b.preamble);
  if (b.documents?.length) c.messages.push(documentsMessage(b.documents.map((d) => ({ id: d.id, data: d }))));
  for (const m of b.chat_history ?? []) {
    if (m.role === 'CHATBOT') c.chatbot(m);
    else if (m.role === 'TOOL') c.results(m.tool_results ?? []);
    else c.text(m.role === 'SYSTEM' ? 'system' : 'user', m.message ?? '');
  }
  if (b.tool_results?.length) c.results(b.tool_results);
  if (b.message) c.text('user', b.message);
  const messages = c.end();
  // Cohere: "message must be at least 1 token long or tool results must be specified" (a history alone is not answered)
  if (!b.message && !b.tool_results?.length) throw new ApiError(400, 'invalid_request', "'message' must not be empty unless 'tool_results' are sent.", { param: 'message' });
  const out: CanonicalRequest = { model: b.model, messages };
  if (b.tools?.length) out.tools = b.tools.map(v1Tool);
  return withSampling(out, b, b.response_format?.type === 'json_object' ? { schema: b.response_format.schema } : undefined);
}
