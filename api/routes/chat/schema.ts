import Joi from 'joi';
import { paramOf } from '../../validate';
import { openaiNameInItsWords } from '../openai-name';
import { jsonKind, listed } from '../openai-words';
import { toolCallPairingMessages, toolCallsPaired } from './tool-pairing';
import { CHAT_SERVICE_TIERS } from './service-tier';

/**
 * OpenAI's `safety_identifier` (chat completions and responses): a string of at most 128 characters.
 * openai-node documents 128 since 7.33.0 (2026-10-14, "document 128-character safety identifiers",
 * `resources/chat/completions/completions.d.ts` and `resources/responses/responses.d.ts` of 7.60.0);
 * the vendored OpenAPI document (2026-08-21) predates that and still says 64.
 */
export const SAFETY_IDENTIFIER_MAX = 128;
export const safetyIdentifier = Joi.string().max(SAFETY_IDENTIFIER_MAX).allow('', null);

/**
 * A content part as OpenAI's document types the ones every adapter reads: a `text` part needs its
 * `text`, an `image_url` part its `image_url.url`; other types are each adapter's to take or refuse.
 */
const part = Joi.object({
  type: Joi.string().required(),
  text: Joi.when('type', { is: 'text', then: Joi.string().allow('').required() }),
  image_url: Joi.when('type', { is: 'image_url', then: Joi.object({ url: Joi.string().required() }).unknown(true).required() }),
}).unknown(true);

/** An assistant turn's tool call (ChatCompletionMessageToolCall): a function call needs its id, name and arguments text. */
const toolCall = Joi.object({
  id: Joi.string().required(),
  type: Joi.string().required(),
  function: Joi.when('type', { is: 'function', then: Joi.object({ name: Joi.string().required(), arguments: Joi.string().allow('').required() }).unknown(true).required() }),
}).unknown(true);

/**
 * An array OpenAI's document bounds (`minItems`/`maxItems`), refused as its API refuses it: 400
 * `empty_array` / `array_above_max_length` naming the field, in its words ("Invalid 'tools': empty
 * array. Expected an array with minimum length 1, but got an empty array instead.", continuedev/continue
 * issue 3370 against gpt-4o; "Invalid 'messages[1].tool_calls': empty array. ...", openai-node pull
 * request 1341; "Invalid 'tools': array too long. Expected an array with maximum length 128, ...",
 * Upsonic issue 176). `field` is the path as the error's `param` names it.
 */
export const TOOLS_MAX = 128;
const bounded = (items: Joi.Schema, max: number) =>
  Joi.array()
    .items(items)
    .custom((v: unknown[], helpers) => {
      const field = paramOf(helpers.state.path);
      if (v.length === 0) return helpers.error('array.emptyOpenAI', { errorCode: 'empty_array', field });
      return v.length > max ? helpers.error('array.longOpenAI', { errorCode: 'array_above_max_length', field, length: v.length, max }) : v;
    })
    .messages({
      'array.emptyOpenAI': "Invalid '{#field}': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'array.longOpenAI': "Invalid '{#field}': array too long. Expected an array with maximum length {#max}, but got an array with length {#length} instead.",
    });

/** `tool_choice`: none, auto or required, or an object of a type; a function choice names its function. */
const toolChoice = Joi.alternatives(
  Joi.string().valid('none', 'auto', 'required'),
  Joi.object({
    type: Joi.string().required(),
    function: Joi.when('type', { is: 'function', then: Joi.object({ name: Joi.string().required() }).unknown(true).required() }),
  }).unknown(true),
).allow(null);

/**
 * OpenAI refuses a `tool_choice` without `tools` to choose from, `none` included (400
 * invalid_request_error naming `tool_choice`, in these words; a request checked against OpenAI's API,
 * docs/api.md); absent, empty or null `tools` are all none to choose from. Checked once the choice
 * itself is of its type, so a malformed one keeps its own message.
 */
const TOOL_CHOICE_WITHOUT_TOOLS = "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.";
const withoutTools = Joi.any()
  .custom((_v, helpers) => helpers.error('toolChoice.withoutTools'))
  .messages({ 'toolChoice.withoutTools': TOOL_CHOICE_WITHOUT_TOOLS });

/** A field the request may not carry (in its `when` case): any value but null is refused with `message`, as Joi error `code`. */
const refusedUnlessNull = (code: string, message: string) =>
  Joi.any()
    .custom((v, helpers) => (v === null ? v : helpers.error(code)))
    .messages({ [code]: message });

/** The same rule for `parallel_tool_calls` (true or false; null is absent), in OpenAI's words (Upsonic issue 323 quotes its body). */
const PARALLEL_WITHOUT_TOOLS = "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.";
const parallelWithoutTools = refusedUnlessNull('parallelToolCalls.withoutTools', PARALLEL_WITHOUT_TOOLS);

/**
 * OpenAI refuses `stream_options` on a request that does not stream, and `top_logprobs` without
 * `logprobs: true` (400 invalid_request_error naming the field, in these words; null is absent): the
 * gateway sent both on to an OpenAI-compatible upstream, and a translating adapter dropped or refused
 * them each its own way. Checked once the field itself is of its type, so a mistyped one keeps its message.
 */
const STREAM_OPTIONS_WITHOUT_STREAM = "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
const streamOptionsWithoutStream = refusedUnlessNull('streamOptions.withoutStream', STREAM_OPTIONS_WITHOUT_STREAM);
const TOP_LOGPROBS_WITHOUT_LOGPROBS = "The 'top_logprobs' parameter is only allowed when 'logprobs' is enabled.";
const topLogprobsWithoutLogprobs = refusedUnlessNull('topLogprobs.withoutLogprobs', TOP_LOGPROBS_WITHOUT_LOGPROBS);
/**
 * OpenAI refuses `max_tokens` beside `max_completion_tokens` (both not null): 400
 * invalid_request_error, code `invalid_parameter_combination`, naming `max_tokens`, in these words
 * (langchain-ai/langgraph issue 5943 quotes its body). The gateway sent both on to an
 * OpenAI-compatible upstream (OpenAI refused them there, after a lane and a reservation were taken)
 * and a translating adapter picked one. Null is absent.
 */
const BOTH_MAX_TOKENS = "Setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported.";
const maxTokensBesideMaxCompletion = Joi.any()
  .custom((v, helpers) => (v === null ? v : helpers.error('maxTokens.both', { errorCode: 'invalid_parameter_combination' })))
  .messages({ 'maxTokens.both': BOTH_MAX_TOKENS });

/**
 * OpenAI's ReasoningEffort and Verbosity (its API document, openai-node 7.60.0's `ReasoningEffort`
 * and `verbosity`): a value outside them is refused as OpenAI refuses one, 400 invalid_request_error
 * code `invalid_value` naming the field ("Invalid value: 'x'. Supported values are: 'low', 'medium',
 * and 'high'."), a value not a string `invalid_type` ("Invalid type for 'verbosity': expected one of
 * 'low', 'medium', or 'high', but got an integer instead."). Both went to an OpenAI-compatible
 * upstream as sent (OpenAI refused them there), and a translating adapter mapped or refused them each
 * its own way. Null is absent.
 */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export const VERBOSITIES = ['low', 'medium', 'high'] as const;
/**
 * `reasoning_effort`'s refusal of a string outside OpenAI's values, made by the chat route once the
 * model is known (api/routes/chat/router.ts refuseUnwantedEffort): a level the model's config lists
 * (`config.reasoning_effort`, docs/catalog.md: an upstream's own, such as Groq's `default`) is sent.
 */
export const effortValueMessage = (v: string) => `Invalid value: '${v}'. Supported values are: ${listed(REASONING_EFFORTS, 'and')}.`;
/** `anyString`: a string outside `values` is left to the route (reasoning_effort: effortValueMessage); other types are still refused here. */
const oneOf = (values: readonly string[], anyString = false, nullable = true) =>
  Joi.any()
    .custom((v, helpers) => {
      if ((nullable && v === null) || values.includes(v as string) || (anyString && typeof v === 'string')) return v;
      const field = paramOf(helpers.state.path);
      if (typeof v !== 'string') return helpers.error('oneOf.type', { errorCode: 'invalid_type', field, kind: jsonKind(v) });
      return helpers.error('oneOf.value', { errorCode: 'invalid_value', value: v });
    })
    .messages({
      'oneOf.value': `Invalid value: '{#value}'. Supported values are: ${listed(values, 'and')}.`,
      'oneOf.type': `Invalid type for '{#field}': expected one of ${listed(values, 'or')}, but got {#kind} instead.`,
    });

/** OpenAI's message roles, in the order its refusal of another lists them. */
export const CHAT_ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'] as const;
/**
 * The roles whose `content` OpenAI's document requires and does not let be null
 * (ChatCompletionRequestSystemMessage, …DeveloperMessage, …UserMessage, …ToolMessage); an
 * assistant's may be absent or null (it has tool calls), a function message's null.
 */
export const CONTENT_REQUIRED: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'tool']);

/**
 * A message's role and content as OpenAI's API refuses them (its bodies: "Missing required parameter:
 * 'messages[0].content'." code `missing_required_parameter`, param `messages[0].content`; a null
 * content "Invalid value for 'content': expected a string, got null." with param
 * `messages.[0].content` and code null, as quoted from its API in langchain-ai/langchainjs issue 4153).
 * The gateway sent such a turn on: an OpenAI-compatible upstream refused it, Anthropic's translation
 * sent an empty turn, Gemini and Bedrock refused an empty conversation in their own words.
 */
const MISSING = "Missing required parameter: '{#field}'.";
const NULL_CONTENT = "Invalid value for 'content': expected a string, got null.";
function roleAndContent(m: Record<string, unknown>, helpers: Joi.CustomHelpers): unknown {
  const at = paramOf(helpers.state.path) ?? 'messages';
  const missing = (key: string) => helpers.error('message.missing', { errorCode: 'missing_required_parameter', field: `${at}.${key}`, param: `${at}.${key}` });
  if (m.role === undefined) return missing('role');
  if (!CONTENT_REQUIRED.has(m.role as string)) return m;
  if (m.content === undefined) return missing('content');
  const index = helpers.state.path?.at(-1);
  return m.content === null ? helpers.error('message.nullContent', { param: `messages.[${String(index)}].content` }) : m;
}

const message = Joi.object({
  role: oneOf(CHAT_ROLES, false, false),
  // a parts array has at least one part (OpenAI's minItems 1: empty_array naming messages[N].content)
  content: Joi.alternatives(Joi.string().allow(''), bounded(part, Number.MAX_SAFE_INTEGER), null),
  tool_calls: bounded(toolCall, Number.MAX_SAFE_INTEGER).allow(null),
  // a tool result names the call it answers (ChatCompletionRequestToolMessage)
  tool_call_id: Joi.when('role', { is: 'tool', then: Joi.string().required() }),
})
  .unknown(true)
  .custom(roleAndContent)
  .messages({ 'message.missing': MISSING, 'message.nullContent': NULL_CONTENT });

/** OpenAI's refusal of a chat body without `messages`, in its words and code. */
function messagesGiven(body: Record<string, unknown>, helpers: Joi.CustomHelpers): unknown {
  return body.messages === undefined ? helpers.error('message.missing', { errorCode: 'missing_required_parameter', field: 'messages', param: 'messages' }) : body;
}

/** `stream_options`: an object or null, on a streamed request only. */
const streamOptions = Joi.object({ include_usage: Joi.boolean() }).unknown(true).allow(null).when('stream', { not: Joi.valid(true).required(), then: streamOptionsWithoutStream });

/**
 * `logit_bias` of chat and legacy completions: token ids (non-negative integers, as JSON object keys)
 * to a bias from -100 to 100 (OpenAI's document). Another key is refused in OpenAI's words ("Invalid
 * key in 'logit_bias': AI. You should only be submitting non-negative integers.", as its API answered
 * in OkGoDoIt/OpenAI-API-dotnet issue 163), a bias outside the range or not a number naming the same
 * field; both went to an OpenAI-compatible upstream as sent (one that clamps, as vLLM does, served them).
 */
export const LOGIT_BIAS_MAX = 100;
export const TOKEN_ID = /^(0|[1-9]\d*)$/;
export const plainBias = (v: unknown): boolean => typeof v === 'number' && v >= -LOGIT_BIAS_MAX && v <= LOGIT_BIAS_MAX;
const logitBias = Joi.object()
  .unknown(true)
  .custom((v: Record<string, unknown>, helpers) => {
    for (const [k, b] of Object.entries(v)) {
      if (!TOKEN_ID.test(k)) return helpers.error('logitBias.key', { token: k });
      if (!plainBias(b)) return helpers.error('logitBias.value', { token: k });
    }
    return v;
  })
  .messages({
    'logitBias.key': "Invalid key in 'logit_bias': {{#token}}. You should only be submitting non-negative integers.",
    'logitBias.value': `Invalid value in 'logit_bias' for token {{#token}}: expected a number from -${LOGIT_BIAS_MAX} to ${LOGIT_BIAS_MAX}.`,
  })
  .allow(null);

/**
 * `stop` of chat and legacy completions (OpenAI's StopConfiguration): a string, or up to 4 of them.
 * More is refused as OpenAI refuses it: 400 `array_above_max_length` naming `stop`, in its words.
 */
export const STOP_MAX = 4;
const stop = Joi.alternatives(
  Joi.string().allow(''),
  Joi.array()
    .items(Joi.string().allow(''))
    .custom((v: string[], helpers) => (v.length > STOP_MAX ? helpers.error('stop.aboveMax', { errorCode: 'array_above_max_length', length: v.length }) : v))
    .messages({ 'stop.aboveMax': `Invalid 'stop': array too long. Expected an array with maximum length ${STOP_MAX}, but got an array with length {{#length}} instead.` }),
).allow(null);

/**
 * `response_format`: an object of a type; a json_schema format needs its `json_schema` with a name as
 * OpenAI's ResponseFormatJsonSchema has it (refused in OpenAI's words: openaiNameInItsWords); its
 * `schema` is checked by the route (../tool-schemas.ts refuseInvalidResponseSchema).
 */
const responseFormat = Joi.object({
  type: Joi.string().required(),
  json_schema: Joi.when('type', {
    is: 'json_schema',
    then: Joi.object({ name: openaiNameInItsWords(), schema: Joi.object().unknown(true), strict: Joi.boolean().allow(null) }).unknown(true).required(),
  }),
})
  .unknown(true)
  .allow(null);

/**
 * A `tools` entry as OpenAI's document types it: a function tool needs its `function` with a `name`
 * of a-z, A-Z, 0-9, `_` and `-`, at most 64 (FunctionObject; refused in OpenAI's words and codes:
 * openaiNameInItsWords), `parameters` an object; a custom tool
 * its `custom` with a `name`. Other types are forwarded to an OpenAI-compatible upstream as sent
 * (a translating adapter refuses them, 400 unsupported_parameter).
 */
const tool = Joi.object({
  type: Joi.string().required(),
  function: Joi.when('type', {
    is: 'function',
    then: Joi.object({
      name: openaiNameInItsWords(),
      description: Joi.string().allow(''),
      parameters: Joi.object().unknown(true),
      strict: Joi.boolean().allow(null),
    })
      .unknown(true)
      .required(),
  }),
  custom: Joi.when('type', { is: 'custom', then: Joi.object({ name: Joi.string().min(1).required(), description: Joi.string().allow('') }).unknown(true).required() }),
}).unknown(true);

/** A body without `model`, refused in OpenAI's words (its `code` and `param` are null). */
const model = Joi.string().min(1).required().messages({ 'any.required': 'you must provide a model parameter' });

/** Chat completions: the fields the gateway must understand; everything else is forwarded. */
export const chatSchema = Joi.object({
  model,
  // tool calls and tool messages pair up (tool-pairing.ts); the fast check leaves such bodies to Joi
  // absent: OpenAI's missing_required_parameter (messagesGiven); empty: its empty_array
  messages: bounded(message, Number.MAX_SAFE_INTEGER).custom(toolCallsPaired).messages(toolCallPairingMessages),
  stream: Joi.boolean(),
  stream_options: streamOptions,
  // not both: OpenAI's invalid_parameter_combination naming max_tokens (BOTH_MAX_TOKENS)
  max_tokens: Joi.number().integer().min(1).allow(null).when('max_completion_tokens', { is: Joi.any().required().invalid(null), then: maxTokensBesideMaxCompletion }),
  max_completion_tokens: Joi.number().integer().min(1).allow(null),
  temperature: Joi.number().min(0).max(2).allow(null),
  top_p: Joi.number().min(0).max(1).allow(null),
  n: Joi.number().integer().min(1).max(128).allow(null),
  // a string outside OpenAI's values is refused by the route unless the model's config lists it (effortValueMessage)
  reasoning_effort: oneOf(REASONING_EFFORTS, true),
  verbosity: oneOf(VERBOSITIES),
  // OpenAI's ranges; a number JSON cannot hold (1e309 parses to Infinity) is refused rather than sent on as null
  logprobs: Joi.boolean().allow(null),
  top_logprobs: Joi.number().integer().min(0).max(20).allow(null).when('logprobs', { not: Joi.valid(true).required(), then: topLogprobsWithoutLogprobs }),
  frequency_penalty: Joi.number().min(-2).max(2).allow(null),
  presence_penalty: Joi.number().min(-2).max(2).allow(null),
  seed: Joi.number().integer().unsafe().allow(null),
  tools: bounded(tool, TOOLS_MAX),
  tool_choice: toolChoice.when('tools', { not: Joi.array().min(1).required(), then: withoutTools }),
  response_format: responseFormat,
  stop,
  logit_bias: logitBias,
  parallel_tool_calls: Joi.boolean().allow(null).when('tools', { not: Joi.array().min(1).required(), then: parallelWithoutTools }),
  user: Joi.string().allow('', null),
  // `store: true` keeps the completion for the stored completions endpoints (stored.ts)
  store: Joi.boolean().allow(null),
  // forwarded as sent to an OpenAI-compatible upstream; longer than OpenAI allows: refused here
  safety_identifier: safetyIdentifier,
  // OpenAI's tiers; another is refused here (a translating adapter dropped it): the answer names the tier served (service-tier.ts)
  service_tier: Joi.string().valid(...CHAT_SERVICE_TIERS).allow(null),
})
  .unknown(true)
  .custom(messagesGiven)
  .messages({ 'message.missing': MISSING });

/**
 * OpenAI's CreateCompletionRequest: "When used with `n`, `best_of` controls the number of candidate
 * completions and `n` specifies how many to return – `best_of` must be greater than `n`" (its API
 * document; equal is served, as Azure's team confirmed in azure-sdk-for-net issue 36258). Fewer
 * candidates than completions to return is refused before anything is sent, naming `best_of`. A
 * `best_of` of 0 (the document's minimum) or null asks for no candidates of its own: not refused.
 */
const BEST_OF_BELOW_N = 'best_of must be greater than or equal to n.';
function bestOfBelowN(v: Record<string, unknown>, helpers: Joi.CustomHelpers): unknown {
  const bestOf = v.best_of;
  const n = typeof v.n === 'number' ? v.n : 1;
  return typeof bestOf === 'number' && bestOf >= 1 && bestOf < n ? helpers.error('bestOf.belowN', { param: 'best_of' }) : v;
}

/**
 * Legacy completions. `max_tokens` 0 is OpenAI's documented minimum (CreateCompletionRequest): with
 * `echo` and `logprobs` it scores a prompt without generating anything. An OpenAI-compatible upstream
 * is sent it; a translated kind refuses it (router.ts checkTranslatableCompletion).
 */
export const completionsSchema = Joi.object({
  model,
  prompt: Joi.alternatives(
    Joi.string().allow(''),
    Joi.array().items(Joi.string().allow('')).min(1),
    Joi.array().items(Joi.number().integer()).min(1),
    Joi.array().items(Joi.array().items(Joi.number().integer())).min(1),
  ).required(),
  stream: Joi.boolean(),
  stream_options: streamOptions,
  max_tokens: Joi.number().integer().min(0).allow(null),
  temperature: Joi.number().min(0).max(2).allow(null),
  top_p: Joi.number().min(0).max(1).allow(null),
  n: Joi.number().integer().min(1).max(128).allow(null),
  frequency_penalty: Joi.number().min(-2).max(2).allow(null),
  presence_penalty: Joi.number().min(-2).max(2).allow(null),
  seed: Joi.number().integer().unsafe().allow(null),
  // OpenAI's CreateCompletionRequest: best_of 0..20 (it multiplies what a budget reserves), logprobs 0..5
  best_of: Joi.number().integer().min(0).max(20).allow(null),
  logprobs: Joi.number().integer().min(0).max(5).allow(null),
  echo: Joi.boolean().allow(null),
  suffix: Joi.string().allow('', null),
  stop,
  logit_bias: logitBias,
})
  .unknown(true)
  .custom(bestOfBelowN)
  .messages({ 'bestOf.belowN': BEST_OF_BELOW_N });
