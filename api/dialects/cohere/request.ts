import Joi from 'joi';
import { ApiError } from '../../../shared/errors/ApiError';
import type { CanonicalMessage, CanonicalPart, CanonicalRequest, CanonicalTool } from '../canonical';

type Json = Record<string, unknown>;

/** Cohere's v2 chat request (`POST /v2/chat`, `CohereClientV2.chat` / `chatStream`), as the gateway reads it. */
export interface CohereChatRequest {
  model: string;
  messages: Json[];
  stream?: boolean;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: Json } }>;
  documents?: Array<string | { id?: string; data?: Json }>;
  response_format?: { type: 'text' | 'json_object'; json_schema?: Json };
  max_tokens?: number;
  stop_sequences?: string[];
  temperature?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  k?: number;
  p?: number;
  tool_choice?: 'REQUIRED' | 'NONE';
  strict_tools?: boolean;
}

/** Cohere's citation modes (v2's `citation_options.mode`, v1's `citation_quality`). */
export const CITATION_MODES = ['ENABLED', 'DISABLED', 'FAST', 'ACCURATE', 'OFF'];

const text = Joi.object({ type: Joi.string().valid('text').required(), text: Joi.string().allow('').required() }).unknown(true);
const image = Joi.object({ type: Joi.string().valid('image_url').required(), image_url: Joi.object({ url: Joi.string().required(), detail: Joi.string() }).unknown(true).required() }).unknown(true);
const thinking = Joi.object({ type: Joi.string().valid('thinking').required() }).unknown(true);
const documentPart = Joi.object({ type: Joi.string().valid('document').required(), document: Joi.object({ data: Joi.alternatives(Joi.object(), Joi.string()).required(), id: Joi.string() }).unknown(true).required() }).unknown(true);
const toolCall = Joi.object({
  id: Joi.string().required(),
  type: Joi.string().valid('function').required(),
  function: Joi.object({ name: Joi.string().required(), arguments: Joi.string().allow('').required() }).unknown(true).required(),
}).unknown(true);

const message = Joi.object({ role: Joi.string().valid('system', 'user', 'assistant', 'tool').required() })
  .unknown(true)
  .when(Joi.object({ role: 'system' }).unknown(), { then: Joi.object({ content: Joi.alternatives(Joi.string(), Joi.array().items(text)).required() }) })
  .when(Joi.object({ role: 'user' }).unknown(), { then: Joi.object({ content: Joi.alternatives(Joi.string(), Joi.array().items(Joi.alternatives(text, image))).required() }) })
  .when(Joi.object({ role: 'assistant' }).unknown(), {
    then: Joi.object({ content: Joi.alternatives(Joi.string(), Joi.array().items(Joi.alternatives(text, thinking))), tool_calls: Joi.array().items(toolCall), tool_plan: Joi.string().allow('') }),
  })
  .when(Joi.object({ role: 'tool' }).unknown(), {
    then: Joi.object({ tool_call_id: Joi.string().required(), content: Joi.alternatives(Joi.string(), Joi.array().items(Joi.alternatives(text, documentPart))).required() }),
  });

/**
 * Cohere's ChatRequest (v2). Fields the gateway does not act on (`citation_options`, `safety_mode`,
 * `logprobs`, `thinking`, `priority`) are accepted and ignored, but typed as Cohere's document types
 * them (its enums and ranges), so a request Cohere refuses is refused here too.
 */
export const cohereChatSchema = Joi.object({
  model: Joi.string().min(1).required(),
  messages: Joi.array().items(message).min(1).required(),
  stream: Joi.boolean(),
  tools: Joi.array().items(
    Joi.object({
      type: Joi.string().valid('function').required(),
      function: Joi.object({ name: Joi.string().min(1).required(), description: Joi.string().allow(''), parameters: Joi.object().unknown(true) }).unknown(true).required(),
    }).unknown(true),
  ),
  strict_tools: Joi.boolean(),
  documents: Joi.array().items(Joi.alternatives(Joi.string(), Joi.object({ id: Joi.string(), data: Joi.object().unknown(true).required() }).unknown(true))),
  response_format: Joi.object({ type: Joi.string().valid('text', 'json_object').required(), json_schema: Joi.object().unknown(true) }).unknown(true),
  max_tokens: Joi.number().integer().min(1),
  stop_sequences: Joi.array().items(Joi.string()).max(5),
  // Cohere's document (cohere-openapi.yaml, v1 and v2 chat): minimum 0, maximum 1
  temperature: Joi.number().min(0).max(1),
  seed: Joi.number().integer().min(0),
  frequency_penalty: Joi.number().min(0).max(1),
  presence_penalty: Joi.number().min(0).max(1),
  k: Joi.number().integer().min(0).max(500),
  p: Joi.number().min(0.01).max(0.99),
  tool_choice: Joi.string().valid('REQUIRED', 'NONE'),
  // accepted and ignored, typed as Cohere's document has them
  safety_mode: Joi.string().valid('CONTEXTUAL', 'STRICT', 'OFF'),
  citation_options: Joi.object({ mode: Joi.string().valid(...CITATION_MODES) }).unknown(true),
  logprobs: Joi.boolean(),
  thinking: Joi.object({ type: Joi.string().valid('enabled', 'disabled').required(), token_budget: Joi.number().integer().min(1) }).unknown(true),
  priority: Joi.number().integer().min(0).max(999),
}).unknown(true);

const partsText = (content: unknown): string =>
  typeof content === 'string' ? content : (content as Json[]).map((p) => (p.type === 'text' ? String(p.text) : p.type === 'document' ? documentText((p.document as Json).data) : '')).join('');

function documentText(data: unknown): string {
  return typeof data === 'string' ? data : JSON.stringify(data);
}

/** Cohere's `documents` (RAG) as a system message the model reads: each with its id, in order. */
export function documentsMessage(docs: NonNullable<CohereChatRequest['documents']>): CanonicalMessage {
  const lines = docs.map((d, i) => {
    const id = typeof d === 'string' ? `doc_${i}` : (d.id ?? `doc_${i}`);
    return `[${id}] ${typeof d === 'string' ? d : documentText(d.data)}`;
  });
  return { role: 'system', content: `Use these documents to answer where they are relevant:\n${lines.join('\n')}` };
}

function toMessage(m: Json): CanonicalMessage {
  const role = m.role as CanonicalMessage['role'];
  if (role === 'user' && Array.isArray(m.content)) {
    return { role, content: (m.content as Json[]).map((p): CanonicalPart => (p.type === 'text' ? { type: 'text', text: String(p.text) } : { type: 'image_url', image_url: p.image_url as { url: string } })) };
  }
  if (role === 'assistant') {
    const out: CanonicalMessage = { role, content: m.content === undefined ? null : partsText(m.content) };
    if (Array.isArray(m.tool_calls) && m.tool_calls.length) out.tool_calls = (m.tool_calls as Json[]).map((c) => ({ id: String(c.id), type: 'function' as const, function: c.function as { name: string; arguments: string } }));
    // the plan it wrote before its calls (Cohere answers it as `tool_plan`, a client sends it back so) is the turn's text
    if (!out.content && typeof m.tool_plan === 'string' && m.tool_plan) out.content = m.tool_plan;
    return out;
  }
  if (role === 'tool') return { role, tool_call_id: String(m.tool_call_id), content: partsText(m.content) };
  return { role, content: partsText(m.content) };
}

/**
 * Cohere v2 chat → the canonical (OpenAI chat) request: messages as they are (text and image parts;
 * an assistant's thinking parts left out, its `tool_plan` its text when it has no other, calls or not), `documents`
 * as a system message after the caller's own, tools, `tool_choice` REQUIRED/NONE, `response_format`
 * (a JSON schema as OpenAI's `json_schema`), `max_tokens`, `stop_sequences`, `temperature`, `p` as
 * `top_p`, `k` as `top_k`, `seed`, and the penalties.
 */
export function cohereToCanonical(b: CohereChatRequest): CanonicalRequest {
  const messages = b.messages.map(toMessage);
  if (b.documents?.length) {
    const firstNonSystem = messages.findIndex((m) => m.role !== 'system');
    messages.splice(firstNonSystem < 0 ? messages.length : firstNonSystem, 0, documentsMessage(b.documents));
  }
  const out: CanonicalRequest = { model: b.model, messages };
  if (b.tools?.length) out.tools = b.tools.map((t): CanonicalTool => ({ type: 'function', function: { name: t.function.name, description: t.function.description, parameters: t.function.parameters ?? { type: 'object', properties: {} }, ...(b.strict_tools ? { strict: true } : {}) } }));
  // Cohere's document: `REQUIRED` needs `tools`; `NONE` answers directly, so without tools it asks for nothing more
  if (b.tool_choice === 'REQUIRED' && !out.tools) throw new ApiError(400, 'invalid_request', "'tool_choice' REQUIRED needs 'tools'.");
  if (b.tool_choice && out.tools) out.tool_choice = b.tool_choice === 'REQUIRED' ? 'required' : 'none';
  return withSampling(out, b, b.response_format?.type === 'json_object' ? { schema: b.response_format.json_schema } : undefined);
}

/** The fields both Cohere chat versions share, as a canonical request has them. */
type Sampling = Pick<CohereChatRequest, 'max_tokens' | 'stop_sequences' | 'temperature' | 'p' | 'k' | 'seed' | 'frequency_penalty' | 'presence_penalty'>;

/**
 * Sets on `out` what both Cohere chat versions share: a JSON answer (`json`: its schema, if any, as
 * OpenAI's `json_schema`), `max_tokens`, `stop_sequences`, `temperature`, `p` as `top_p`, `k` as
 * `top_k`, `seed` and the penalties.
 */
export function withSampling(out: CanonicalRequest, b: Sampling, json: { schema?: Json } | undefined): CanonicalRequest {
  if (json) out.response_format = json.schema ? { type: 'json_schema', json_schema: { name: 'output', schema: json.schema } } : { type: 'json_object' };
  if (b.max_tokens !== undefined) out.max_completion_tokens = b.max_tokens;
  if (b.stop_sequences?.length) out.stop = b.stop_sequences;
  if (b.temperature !== undefined) out.temperature = b.temperature;
  if (b.p !== undefined) out.top_p = b.p;
  if (b.k) out.top_k = b.k;
  if (b.seed !== undefined) out.seed = b.seed;
  if (b.frequency_penalty !== undefined) out.frequency_penalty = b.frequency_penalty;
  if (b.presence_penalty !== undefined) out.presence_penalty = b.presence_penalty;
  return out;
}
