import Joi from 'joi';
import { openaiNameInItsWords, RESPONSES_FUNCTION_NAME_MAX } from '../openai-name';
import { openaiSearchTool } from '../../dispatch/native-search/schema';
import { safetyIdentifier } from '../chat/schema';
import { MESSAGE_ROLES, TOOL_CHOICE_MODES } from '../openai-words';
import { paramOf } from '../../validate';
import { SIGNED_CALL_ID } from '../../../workers/providers/gemini/call-ids';

/** OpenAI's ResponseIncludable (openai 7.60.0 `resources/responses/responses.d.ts`). */
export const INCLUDABLE = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
] as const;

const fn = Joi.object({ type: Joi.string().required(), name: Joi.string().min(1).required() }).unknown(true);

/**
 * A namespace's member: a function's name as OpenAI's FunctionToolParam has it (the vendored document:
 * ^[a-zA-Z0-9_-]+$, at most 128), refused in the words of a top-level function's (openaiNameInItsWords, at
 * `tools[N].tools[M].name`: OpenAI's refusal of a member's name was not found quoted, the place is the
 * one its params give a member); a custom tool's name as a top-level custom tool's.
 */
const member = fn.when(Joi.object({ type: 'function' }).unknown(), { then: Joi.object({ name: openaiNameInItsWords(RESPONSES_FUNCTION_NAME_MAX) }) });

/** OpenAI's NamespaceToolParam: a named group of function tools. */
const namespaceTool = Joi.object({ name: Joi.string().min(1).required(), description: Joi.string().allow('', null), tools: Joi.array().items(member).min(1).required() }).unknown(true);

/**
 * OpenAI's ToolSearchToolParam, its fields typed as the vendored OpenAPI document and openai-node
 * (src/resources/responses/responses.ts ToolSearchTool, 2026-08-21) type them: `execution` 'server' or
 * 'client', `description` a string or null, `parameters` (a client-run search's, offered upstream as
 * its function's parameters: api/dialects/responses/request.ts) an object (EmptyModelParam) or null.
 * A `parameters` of another type was taken and sent upstream as the function's parameters; now
 * OpenAI's 400 `invalid_type` naming `tools[N].parameters`, nothing sent or billed.
 */
const toolSearchTool = Joi.object({
  execution: Joi.string().valid('server', 'client'),
  description: Joi.string().allow('', null),
  parameters: Joi.object().unknown(true).allow(null),
}).unknown(true);

/** A tool of `tools`, or one an input item loads (`additional_tools`, a client tool search's output). */
const tool = Joi.object({ type: Joi.string().required() })
  .unknown(true)
  // OpenAI refuses a function name outside ^[a-zA-Z0-9_-]+$ or over 128 characters, in its words (openai-name.ts)
  .when(Joi.object({ type: 'function' }).unknown(), {
    then: Joi.object({
      name: openaiNameInItsWords(RESPONSES_FUNCTION_NAME_MAX),
      parameters: Joi.object().unknown(true).allow(null),
    }),
  })
  .when(Joi.object({ type: Joi.string().pattern(/^web_search/) }).unknown(), { then: openaiSearchTool })
  .when(Joi.object({ type: 'custom' }).unknown(), { then: fn })
  .when(Joi.object({ type: 'namespace' }).unknown(), { then: namespaceTool })
  .when(Joi.object({ type: 'tool_search' }).unknown(), { then: toolSearchTool });

const is = (...types: string[]) => Joi.object({ type: Joi.valid(...types).required() }).unknown();

/** OpenAI's ReasoningEffort values (openai 7.60.0), or null: the model's default. */
const effort = Joi.string().valid('none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max').allow(null);

/** The content parts a message of `input` may hold (OpenAI's ResponseInputContent, and an assistant turn's output_text and refusal; chat's `text` too). */
const PART_TYPES = ['input_text', 'input_image', 'input_file', 'output_text', 'refusal', 'text'];

/** A part's `file_id` (null is none): the gateway keeps no files, so an image named by one is refused in its own words, naming the field. */
const fileIdRefused = Joi.any()
  .custom((v, helpers) => (v === null ? v : helpers.error('part.fileId')))
  .messages({ 'part.fileId': '{#label}: file ids are not supported; send the image by its image_url.' });

/** A message's content part: typed, and a text part's text (or a refusal's) a string, as OpenAI's InputContent/OutputContent require. */
const part = Joi.object({ type: Joi.string().valid(...PART_TYPES).required() })
  .unknown(true)
  .when(is('input_text', 'output_text', 'text'), { then: Joi.object({ text: Joi.string().allow('').required() }) })
  .when(is('refusal'), { then: Joi.object({ refusal: Joi.string().allow('').required() }) })
  // OpenAI's ResponseInputImage by URL (a data URL or https); a file id names a file the gateway does not keep
  // (a file id is refused in the gateway's words before the image_url OpenAI's would miss: see fileIdRefused)
  .when(is('input_image'), { then: Joi.object({ file_id: fileIdRefused, image_url: Joi.string().min(1).required() }) })
  .when(is('input_file'), {
    then: Joi.object({ file_data: Joi.string().min(1), file_url: Joi.string().min(1) })
      .or('file_data', 'file_url')
      .messages({ 'object.missing': '{#label} needs file_data or file_url (file ids are not supported).' }),
  });

/** A function or custom tool call's output: a string, or a list of input parts (OpenAI's ResponseFunctionCallOutputItemList). */
const callOutput = Joi.object({
  // without its call id the output answers no call (it went upstream as a tool result for "undefined")
  call_id: Joi.string().min(1).required(),
  // an object is read as its JSON (request.ts, outputText)
  output: Joi.alternatives(Joi.string().allow(''), Joi.array().items(part), Joi.object().unknown(true)).required(),
});

/**
 * The lengths the vendored OpenAPI document puts on an item's fields (test/fixtures/vendor/openai/openapi.json),
 * refused in OpenAI's words (openai-words.ts: string_above_max_length, empty_string, and a name's pattern as
 * openai-name.ts words it) before anything is sent or billed; before, they were sent upstream as given.
 * - `call_id` of at most 64 (minLength 1): FunctionCallOutputItemParam, ComputerCallOutputItemParam,
 *   ToolSearchCallItemParam, ToolSearchOutputItemParam, FunctionShellCallItemParam,
 *   FunctionShellCallOutputItemParam, ApplyPatchToolCallItemParam, ApplyPatchToolCallOutputItemParam (null
 *   where the document allows it). A call item's own `call_id` (FunctionToolCall, CustomToolCall) and a custom
 *   tool's output's (CustomToolCallOutput) have no limit there and keep none here.
 * - FunctionCallOutputItemParam: `name` 1 to 128 characters, `namespace` 1 to 64 of ^[a-zA-Z0-9_-]+$ (both
 *   or null), `output` as a string at most 10485760 characters, as its input_text parts' `text`.
 * A `function_call` item's `name` has no limit in the document (FunctionToolCall.name: a string), so none is set.
 */
const CALL_ID_MAX = 64;
const OUTPUT_MAX = 10_485_760;
/**
 * The limit spares the call ids the gateway hands out for a Gemini call with its thought signature
 * (workers/providers/gemini/call-ids.ts: Gemini 3 refuses the next turn without the signature, which
 * rides in the id and runs to hundreds of characters): an output answering such a call brings its id
 * back whole. OpenAI's own ids are far shorter, so an OpenAI upstream never hands one out.
 */
const callId = Joi.string()
  .min(1)
  .when(Joi.string().pattern(SIGNED_CALL_ID), { otherwise: Joi.string().max(CALL_ID_MAX) });
const CALL_ID_ITEMS = ['computer_call_output', 'tool_search_call', 'tool_search_output', 'shell_call', 'shell_call_output', 'apply_patch_call', 'apply_patch_call_output'];
const functionCallOutput = callOutput.keys({
  call_id: callId.required(),
  output: Joi.alternatives(Joi.string().allow('').max(OUTPUT_MAX), Joi.array().items(part.when(is('input_text'), { then: Joi.object({ text: Joi.string().allow('').max(OUTPUT_MAX) }) })), Joi.object().unknown(true)).required(),
  name: Joi.string().min(1).max(RESPONSES_FUNCTION_NAME_MAX).allow(null),
  namespace: openaiNameInItsWords().optional().allow(null),
});

/**
 * An `additional_tools` item's `role`: OpenAI's AdditionalToolsItemParam requires it and takes `developer`
 * only (the vendored document: `"enum": ["developer"]`, "Only `developer` is supported", in `required`;
 * openai-node 7.5's ResponseInputItem.AdditionalTools types it `role: 'developer'`). Refused in OpenAI's
 * words at `input[N].role`: missing as any missing field, another value as any value outside its list.
 * Before, an item without it, or with `user`, loaded its tools all the same.
 */
const developerRole = (item: { role?: unknown }, helpers: Joi.CustomHelpers) => {
  if (item.role === 'developer') return item;
  const param = `${paramOf(helpers.state.path) ?? 'input'}.role`;
  if (item.role === undefined) return helpers.error('additionalTools.roleMissing', { errorCode: 'missing_required_parameter', param });
  return helpers.error('additionalTools.role', { errorCode: 'invalid_value', param, role: String(item.role) });
};
const additionalTools = Joi.object({ tools: Joi.array().items(tool).required() })
  .custom(developerRole)
  .messages({
    'additionalTools.roleMissing': "Missing required parameter: '{#param}'.",
    'additionalTools.role': "Invalid value: '{#role}'. Supported values are: 'developer'.",
  });

/**
 * OpenAI's TextResponseFormatJsonSchema: `name` (a-z, A-Z, 0-9, `_` and `-`, at most 64, refused in
 * OpenAI's words: openaiNameInItsWords) and `schema` are required, as OpenAI requires them; `strict` a
 * boolean or null, `description` a string. `text.format`'s and a `configuration_update` item's.
 */
const jsonSchemaFormat = Joi.object({
  name: openaiNameInItsWords(),
  schema: Joi.object().unknown(true).required(),
  strict: Joi.boolean().allow(null),
  description: Joi.string().allow(''),
});

/**
 * An input item. The fields the gateway reads are checked as OpenAI's item params type them, so a
 * malformed one is a 400 naming it (not a failure of the gateway's own, nor a call id of
 * "undefined" sent upstream): a message's (type `message` or none) `content` is a string or a list
 * of parts of the known types (an image by its URL, a file by its data or URL) and its `role` one of
 * OpenAI's four; a function or custom tool call has its `call_id`, `name` and `arguments` (`input`)
 * strings, and its output its `call_id` and `output`; the
 * tools an item loads are tools as `tools` takes them; a shell call output's `output` is a string or
 * a list of objects; an item reference its `id`. Other items and fields pass as they are.
 */
export const inputItem = Joi.object({ type: Joi.string().allow(null), role: Joi.string() })
  .unknown(true)
  // OpenAI's ItemReference (its `type` optional): the id of a stored item, replaced by it (item-reference.ts)
  .when(is('item_reference'), { then: Joi.object({ id: Joi.string().min(1).max(128).required() }) })
  // an item with an `id` and no type, role or content is a reference too (item-reference.ts): not a message
  .when(Joi.object({ type: Joi.valid(null), role: Joi.forbidden(), content: Joi.forbidden(), id: Joi.required() }).unknown(), {
    then: Joi.object({ id: Joi.string().min(1).max(128) }),
    otherwise: Joi.object().when(Joi.object({ type: Joi.valid('message', null) }).unknown(), {
      then: Joi.object({
        role: Joi.string().valid(...MESSAGE_ROLES).required(),
        content: Joi.alternatives(Joi.string().allow(''), Joi.array().items(part)).required(),
        // OpenAI's message phase (an assistant turn's: commentary or final_answer), listed with the input items
        phase: Joi.string().valid('commentary', 'final_answer').allow(null),
      }),
    }),
  })
  .when(is('function_call'), { then: Joi.object({ call_id: Joi.string().min(1).required(), name: Joi.string().min(1).required(), arguments: Joi.string().allow('').required() }) })
  .when(is('custom_tool_call'), { then: Joi.object({ call_id: Joi.string().min(1).required(), name: Joi.string().min(1).required(), input: Joi.string().allow('').required() }) })
  .when(is('function_call_output'), { then: functionCallOutput })
  .when(is('custom_tool_call_output'), { then: callOutput })
  .when(is(...CALL_ID_ITEMS), { then: Joi.object({ call_id: callId.allow(null) }) })
  // the tools an item loads, required as OpenAI's AdditionalToolsItemParam and ToolSearchOutputItemParam require them (the
  // vendored document; openai-node's ResponseInputItem.AdditionalTools, ResponseToolSearchOutputItemParam), and a tool
  // search call's `arguments` as its ToolSearchCallItemParam (openai-node ResponseInputItem.ToolSearchCall) requires them
  .when(is('additional_tools'), { then: additionalTools })
  .when(is('tool_search_output'), { then: Joi.object({ tools: Joi.array().items(tool).required() }) })
  .when(is('tool_search_call'), { then: Joi.object({ arguments: Joi.any().required() }) })
  .when(is('shell_call_output'), { then: Joi.object({ output: Joi.alternatives(Joi.string().allow(''), Joi.array().items(Joi.object().unknown(true))) }) })
  // OpenAI's ResponseConfigurationUpdateItemParam: the effort and format the response is made with (request.ts configuredBy)
  .when(is('configuration_update'), {
    then: Joi.object({
      reasoning: Joi.object({ effort }).unknown(true),
      text: Joi.object({ format: Joi.object({ type: Joi.string().valid('text', 'json_schema').required() }).unknown(true).when(is('json_schema'), { then: jsonSchemaFormat }).required() }).unknown(true),
    }),
  });

/** `POST /v1/responses`: the fields the gateway reads; other fields are accepted and ignored. */
export const responsesSchema = Joi.object({
  model: Joi.string().min(1).required(),
  // optional with `conversation` or `previous_response_id` (OpenAI's CreateResponse requires neither): checked in router.ts
  input: Joi.alternatives(Joi.string().min(1), Joi.array().items(inputItem).min(1)),
  instructions: Joi.string().allow('', null),
  tools: Joi.array().items(tool),
  tool_choice: Joi.alternatives(Joi.string().valid(...TOOL_CHOICE_MODES), Joi.object({ type: Joi.string().required(), name: Joi.string() }).unknown(true)),
  parallel_tool_calls: Joi.boolean().allow(null),
  max_output_tokens: Joi.number().integer().min(16).allow(null), // OpenAI's CreateResponse: minimum 16
  temperature: Joi.number().min(0).max(2).allow(null),
  top_p: Joi.number().min(0).max(1).allow(null),
  stream: Joi.boolean().allow(null),
  previous_response_id: Joi.string().max(64).allow(null),
  store: Joi.boolean().allow(null),
  background: Joi.boolean().allow(null),
  truncation: Joi.string().valid('auto', 'disabled').allow(null),
  // OpenAI's ConversationParam: the conversation's id, or `{id}` (api/routes/responses/conversation.ts)
  conversation: Joi.alternatives(Joi.string().min(1).max(128), Joi.object({ id: Joi.string().min(1).max(128).required() }).unknown(true)).allow(null),
  // OpenAI's Metadata: at most 16 pairs, keys of at most 64 characters (a longer one is no key of the pattern: named so, not "not allowed"), values of at most 512
  metadata: Joi.object()
    .pattern(Joi.string().max(64), Joi.string().max(512))
    .max(16)
    .messages({ 'object.unknown': "'metadata' keys are at most 64 characters: '{#child}' is longer." })
    .allow(null),
  // OpenAI's document: a string, no minimum length (LlamaIndex sends "").
  user: Joi.string().allow(''),
  reasoning: Joi.object({ effort }).unknown(true).allow(null),
  // OpenAI's ResponseIncludable values (openai 7.60.0); OpenAI refuses any other
  include: Joi.array().items(Joi.string().valid(...INCLUDABLE)).allow(null),
  prompt_cache_key: Joi.string().allow('', null),
  // hints, echoed in the Response as OpenAI echoes them (api/dialects/responses/response.ts)
  prompt_cache_retention: Joi.string().valid('in_memory', '24h').allow(null),
  safety_identifier: safetyIdentifier,
  service_tier: Joi.string().valid('auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast').allow(null),
  // above 0 asks for log probabilities with that many alternatives (api/dialects/responses/request.ts, wantsLogprobs)
  top_logprobs: Joi.number().integer().min(0).max(20).allow(null),
  // a cap on the hosted tool calls the gateway runs (web search: api/dialects/responses/native.ts); at least 1, as
  // OpenAI's API refuses 0 ("integer below minimum value. Expected a value >= 1", integer_below_min_value: its
  // behaviour as recorded by llamastack/llama-stack pull request 4062; its OpenAPI document states no minimum)
  max_tool_calls: Joi.number().integer().min(1).allow(null),
  client_metadata: Joi.object().unknown(true).allow(null),
  // OpenAI's image context policy; `enabled` is refused (request.ts, refuseUnhonoured), the others answered `disabled`
  image: Joi.object({ context_compression: Joi.string().valid('auto', 'enabled', 'disabled').allow(null) }).unknown(true).allow(null),
  text: Joi.object({
    format: Joi.object({ type: Joi.string().valid('json_object', 'text', 'json_schema').required() })
      .unknown(true)
      .when(is('json_schema'), { then: jsonSchemaFormat }),
    verbosity: Joi.string().valid('low', 'medium', 'high').allow(null),
  }).unknown(true),
}).unknown(true);

/**
 * `POST /v1/responses/input_tokens` (OpenAI's TokenCountsBody): the request `POST /v1/responses`
 * takes, with `model` and `input` optional (no model: the default tokenizer profile counts).
 */
export const inputTokensSchema = responsesSchema.fork(['model', 'input'], (s) => s.optional().allow(null));

