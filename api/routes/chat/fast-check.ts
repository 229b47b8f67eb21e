/**
 * The common chat completions body checked without Joi: when every field the chat schema
 * (schema.ts) constrains is plainly of its type and range, and no object anywhere in the body has an
 * own `__proto__` key (api/validate.ts), the body is what Joi would accept and return, copied at the
 * levels Joi copies (the body, `messages` and each message, `tools` and each tool, `stream_options`).
 * Anything else, valid or not, returns undefined and goes to Joi, so every refusal keeps Joi's message.
 * Joi was the largest single part of the web pod's work per chat request (docs/benchmark.md, seventh
 * session); test/unit/dialects/chat-fast-check checks this against the schema over a corpus.
 */
import { isRecord } from '../../../shared/is-record';
import { hasProtoKey } from '../../validate';
import { CHAT_ROLES, CONTENT_REQUIRED, SAFETY_IDENTIFIER_MAX, STOP_MAX, TOKEN_ID, TOOLS_MAX, VERBOSITIES, plainBias } from './schema';
import { OPENAI_NAME } from '../openai-name';
import { unpairedToolCall } from './tool-pairing';
import { CHAT_SERVICE_TIERS } from './service-tier';

type Obj = Record<string, unknown>;

const ROLES: ReadonlySet<string> = new Set(CHAT_ROLES);

/** Absent, null, or a safe integer within [min, max] (not -0, which Joi returns as 0). */
const intOrNull = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER) => v === undefined || v === null || (Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max && !Object.is(v, -0));
/** Absent, null, or a finite number within [min, max] (not -0, which Joi returns as 0). */
const numOrNull = (v: unknown, min: number, max: number) => v === undefined || v === null || (typeof v === 'number' && v >= min && v <= max && !Object.is(v, -0));
/** Absent, null, or one of `values`. */
const amongOrNull = (v: unknown, values: readonly string[]) => v === undefined || v === null || values.includes(v as string);
/** Absent, null, or a boolean. */
const boolOrNull = (v: unknown) => v === undefined || v === null || typeof v === 'boolean';

/** A content part as the schema's `part` takes it. */
function plainPart(p: unknown): boolean {
  if (!isRecord(p) || typeof p.type !== 'string') return false;
  if (p.type === 'text') return typeof p.text === 'string';
  if (p.type === 'image_url') return isRecord(p.image_url) && typeof p.image_url.url === 'string';
  return true;
}

/** A tool call as the schema's `toolCall` takes it. */
function plainToolCall(c: unknown): boolean {
  if (!isRecord(c) || typeof c.id !== 'string' || typeof c.type !== 'string') return false;
  return c.type !== 'function' || (isRecord(c.function) && typeof c.function.name === 'string' && typeof c.function.arguments === 'string');
}

function plainMessage(m: unknown): boolean {
  if (!isRecord(m) || typeof m.role !== 'string' || !ROLES.has(m.role)) return false;
  if (m.role === 'tool' && typeof m.tool_call_id !== 'string') return false;
  const calls = m.tool_calls;
  if (calls !== undefined && calls !== null && !(Array.isArray(calls) && calls.length > 0 && calls.every(plainToolCall))) return false;
  const c = m.content;
  // a system, developer, user or tool turn has its content (schema.ts, roleAndContent); a parts array at least one part
  if (c === undefined || c === null) return !CONTENT_REQUIRED.has(m.role);
  return typeof c === 'string' || (Array.isArray(c) && c.length > 0 && c.every(plainPart));
}

/** `tool_choice` as the schema's `toolChoice` takes it. */
function plainToolChoice(c: unknown): boolean {
  if (c === undefined || c === null || c === 'none' || c === 'auto' || c === 'required') return true;
  if (!isRecord(c) || typeof c.type !== 'string') return false;
  return c.type !== 'function' || (isRecord(c.function) && typeof c.function.name === 'string');
}

/** `response_format` as the schema's `responseFormat` takes it. */
function plainResponseFormat(f: unknown): boolean {
  if (f === undefined || f === null) return true;
  if (!isRecord(f) || typeof f.type !== 'string') return false;
  if (f.type !== 'json_schema') return true;
  const j = f.json_schema;
  return isRecord(j) && typeof j.name === 'string' && OPENAI_NAME.test(j.name) && (j.schema === undefined || isRecord(j.schema)) && boolOrNull(j.strict);
}

const plainStop = (v: unknown) => v === undefined || v === null || typeof v === 'string' || (Array.isArray(v) && v.length <= STOP_MAX && v.every((x) => typeof x === 'string'));

const stringOrAbsent = (v: unknown) => v === undefined || typeof v === 'string';

/** A `tools` entry as the schema's `tool` takes it: a function with its named `function`, a custom tool with its `custom`, or another type. */
function plainTool(t: unknown): boolean {
  if (!isRecord(t) || typeof t.type !== 'string' || t.type === '') return false;
  if (t.type === 'function') {
    const f = t.function;
    return (
      isRecord(f) &&
      typeof f.name === 'string' &&
      OPENAI_NAME.test(f.name) &&
      stringOrAbsent(f.description) &&
      (f.parameters === undefined || isRecord(f.parameters)) &&
      boolOrNull(f.strict)
    );
  }
  if (t.type === 'custom') return isRecord(t.custom) && typeof t.custom.name === 'string' && t.custom.name !== '' && stringOrAbsent(t.custom.description);
  return true;
}

/** A tool copied at the levels Joi copies it: the entry, and its `function` or `custom` object. */
function copiedTool(t: Obj): Obj {
  const out: Obj = { ...t };
  if (t.type === 'function') out.function = { ...(t.function as Obj) };
  if (t.type === 'custom') out.custom = { ...(t.custom as Obj) };
  return out;
}

/** The body as Joi's chat schema would return it, or undefined: let Joi decide. */
export function plainChatBody(body: unknown): Obj | undefined {
  if (!isRecord(body) || typeof body.model !== 'string' || body.model === '') return undefined;
  const { messages, tools, stream_options: so } = body;
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(plainMessage)) return undefined;
  // tool calls and tool messages pair up (tool-pairing.ts); one pass, a refusal left to Joi for its words
  if (unpairedToolCall(messages as Parameters<typeof unpairedToolCall>[0]) !== undefined) return undefined;
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return undefined;
  if (!boolOrNull(body.store)) return undefined;
  if (so !== undefined && so !== null && !(isRecord(so) && (so.include_usage === undefined || typeof so.include_usage === 'boolean'))) return undefined;
  if (!intOrNull(body.max_tokens, 1) || !intOrNull(body.max_completion_tokens, 1) || !intOrNull(body.n, 1, 128)) return undefined;
  // not both (schema.ts, BOTH_MAX_TOKENS); verbosity among OpenAI's values, reasoning_effort a string
  if (body.max_tokens !== undefined && body.max_tokens !== null && body.max_completion_tokens !== undefined && body.max_completion_tokens !== null) return undefined;
  // a reasoning_effort string outside OpenAI's values is the route's to refuse (a level the model's config lists is sent: router.ts)
  if (!(body.reasoning_effort === undefined || body.reasoning_effort === null || typeof body.reasoning_effort === 'string') || !amongOrNull(body.verbosity, VERBOSITIES)) return undefined;
  if (!numOrNull(body.temperature, 0, 2) || !numOrNull(body.top_p, 0, 1)) return undefined;
  if (!numOrNull(body.frequency_penalty, -2, 2) || !numOrNull(body.presence_penalty, -2, 2) || !intOrNull(body.top_logprobs, 0, 20)) return undefined;
  if (!boolOrNull(body.logprobs)) return undefined;
  // logit_bias: token ids to a bias from -100 to 100 (schema.ts, logitBias)
  const bias = body.logit_bias;
  if (bias !== undefined && bias !== null && !(isRecord(bias) && Object.entries(bias).every(([k, b]) => TOKEN_ID.test(k) && plainBias(b)))) return undefined;
  if (body.service_tier !== undefined && body.service_tier !== null && !(CHAT_SERVICE_TIERS as readonly unknown[]).includes(body.service_tier)) return undefined;
  // top_logprobs needs logprobs, stream_options a stream (schema.ts, TOP_LOGPROBS_WITHOUT_LOGPROBS, STREAM_OPTIONS_WITHOUT_STREAM)
  if (body.top_logprobs !== undefined && body.top_logprobs !== null && body.logprobs !== true) return undefined;
  if (so !== undefined && so !== null && body.stream !== true) return undefined;
  // any integer JSON can hold (Joi's `unsafe`): not Infinity, not a fraction, not -0 (Joi returns it as 0)
  if (body.seed !== undefined && body.seed !== null && !(Number.isInteger(body.seed) && !Object.is(body.seed, -0))) return undefined;
  const safety = body.safety_identifier;
  if (safety !== undefined && safety !== null && !(typeof safety === 'string' && safety.length <= SAFETY_IDENTIFIER_MAX)) return undefined;
  if (tools !== undefined && !(Array.isArray(tools) && tools.length > 0 && tools.length <= TOOLS_MAX && tools.every(plainTool))) return undefined;
  if (!plainToolChoice(body.tool_choice) || !plainResponseFormat(body.response_format) || !plainStop(body.stop)) return undefined;
  // a tool_choice and parallel_tool_calls need tools (schema.ts, TOOL_CHOICE_WITHOUT_TOOLS, PARALLEL_WITHOUT_TOOLS)
  if (!(Array.isArray(tools) && tools.length > 0) && ((body.tool_choice !== undefined && body.tool_choice !== null) || (body.parallel_tool_calls !== undefined && body.parallel_tool_calls !== null))) return undefined;
  if (!boolOrNull(body.parallel_tool_calls)) return undefined;
  if (body.user !== undefined && body.user !== null && typeof body.user !== 'string') return undefined;
  if (hasProtoKey(body)) return undefined;
  const out: Obj = { ...body };
  out.messages = messages.map((m: Obj) => ({ ...m }));
  if (Array.isArray(tools)) out.tools = tools.map(copiedTool);
  if (isRecord(so)) out.stream_options = { ...so };
  return out;
}
