import Joi from 'joi';
import { anthropicFetchTool, anthropicSearchTool } from '../../dispatch/native-search/schema';

/** The fields of a block's `source`; `content` is what a `content` document source holds. */
const sourceKeys = (content: Joi.Schema) => ({
  type: Joi.string().valid('base64', 'url', 'file', 'text', 'content').required(),
  media_type: Joi.string(),
  data: Joi.string().allow(''),
  url: Joi.string(),
  file_id: Joi.string(),
  content,
});

const sourceOf = (content: Joi.Schema) =>
  Joi.object(sourceKeys(content))
    .unknown(true)
    .when(Joi.object({ type: 'base64' }).unknown(), { then: Joi.object({ media_type: Joi.required(), data: Joi.required() }) })
    .when(Joi.object({ type: 'url' }).unknown(), { then: Joi.object({ url: Joi.required() }) });

const textBlock = Joi.object({ type: Joi.string().required(), text: Joi.string().allow('').required() }).unknown(true);
const imageBlock = Joi.object({ type: Joi.string().required(), source: sourceOf(Joi.any()).required() }).unknown(true);

/** A `content` document source's blocks: Anthropic's ContentBlockSourceContent, text or image blocks. */
const sourceContent = Joi.alternatives().conditional('.type', {
  switch: [
    { is: 'text', then: textBlock },
    { is: 'image', then: imageBlock },
  ],
  otherwise: Joi.object({ type: Joi.string().valid('text', 'image').required() }).unknown(true),
});

const source = sourceOf(Joi.alternatives(Joi.string(), Joi.array().items(sourceContent)));

/**
 * A tool result's content blocks (text, image, document are read; others, such as
 * `search_result`, pass through): checked as the same blocks of a turn are, so a malformed one is a
 * 400 naming it, never a failure of the gateway's own or a text of "undefined" sent upstream.
 */
const resultBlock = Joi.alternatives().conditional('.type', {
  switch: [
    { is: 'text', then: textBlock },
    { is: 'image', then: Joi.object({ type: Joi.string().required(), source: source.required() }).unknown(true) },
    { is: 'document', then: Joi.object({ type: Joi.string().required(), source: source.required() }).unknown(true) },
  ],
  otherwise: Joi.object({ type: Joi.string().required() }).unknown(true),
});

const typed = (type: string, fields: Record<string, Joi.Schema>) => ({
  is: type,
  then: Joi.object({ type: Joi.string().required(), ...fields }).unknown(true),
});

/** Content blocks: the types the gateway reads are checked; others (server tools...) pass through. */
const block = Joi.alternatives().conditional('.type', {
  switch: [
    typed('text', { text: Joi.string().allow('').required() }),
    typed('image', { source: source.required() }),
    typed('document', { source: source.required() }),
    typed('tool_use', { id: Joi.string().required(), name: Joi.string().required(), input: Joi.object().unknown(true).required() }),
    typed('tool_result', { tool_use_id: Joi.string().required(), content: Joi.alternatives(Joi.string().allow(''), Joi.array().items(resultBlock)), is_error: Joi.boolean() }),
    typed('thinking', { thinking: Joi.string().allow('').required(), signature: Joi.string().allow('') }),
    typed('redacted_thinking', { data: Joi.string().required() }),
  ],
  otherwise: Joi.object({ type: Joi.string().required() }).unknown(true),
});

const turn = Joi.object({
  role: Joi.string().valid('user', 'assistant', 'system').required(),
  content: Joi.alternatives(Joi.string().allow(''), Joi.array().items(block)).required(),
}).unknown(false);

/** Anthropic's SystemMessageParam (in the SDK's MessageParam union; Claude Code sends it): text only. */
const systemMessage = Joi.object({
  role: Joi.string().valid('system').required(),
  content: Joi.alternatives(Joi.string().allow(''), Joi.array().items(Joi.object({ type: Joi.string().valid('text').required(), text: Joi.string().allow('').required() }).unknown(true))).required(),
}).unknown(false);

const message = Joi.alternatives().conditional('.role', { is: 'system', then: systemMessage, otherwise: turn });

/**
 * A tool: Anthropic refuses a name outside `^[a-zA-Z0-9_-]{1,128}$` ("tools.N.custom.name: String
 * should match pattern ...", as clients report it) and a custom tool (no `type`, or `custom`) without
 * its `input_schema` (the SDK's Tool requires it); a translated upstream took both as given.
 */
const tool = Joi.object({
  name: Joi.string()
    .pattern(/^[a-zA-Z0-9_-]{1,128}$/)
    .required()
    .messages({ 'string.pattern.base': '{{#label}} should be 1 to 128 of a-z, A-Z, 0-9, underscores and dashes' }),
  description: Joi.string().allow(''),
  input_schema: Joi.when('type', { is: Joi.valid('custom').optional(), then: Joi.object().unknown(true).required(), otherwise: Joi.object().unknown(true) }),
  type: Joi.string(),
})
  .unknown(true)
  .when(Joi.object({ type: Joi.string().pattern(/^web_search_\d{8}$/) }).unknown(), { then: anthropicSearchTool })
  .when(Joi.object({ type: 'web_fetch_20250910' }).unknown(), { then: anthropicFetchTool });

/**
 * Anthropic's ThinkingConfigParam (SDK 1.16): `enabled` with an integer `budget_tokens` of at least
 * 1,024 ("Must be ≥1024"), `adaptive`, `disabled` or `between_tools`; `display` `summarized`,
 * `omitted` or null. Refused on every upstream as Anthropic refuses it: on a translated one the
 * field went unchecked (a Bedrock Claude deployment, or an Anthropic one in a mixed pool, then
 * refused it after a lane was used; an OpenAI-compatible one answered as if it were valid).
 */
const thinking = Joi.object({
  type: Joi.string().valid('enabled', 'adaptive', 'disabled', 'between_tools').required(),
  budget_tokens: Joi.when('type', { is: 'enabled', then: Joi.number().integer().min(1024).required() }),
  display: Joi.string().valid('summarized', 'omitted').allow(null),
}).unknown(true);

/** Structured outputs (`output_config.format`, and the beta's older `output_format`). */
const jsonFormat = Joi.object({ type: Joi.string().valid('json_schema').required(), schema: Joi.object().unknown(true).required() }).unknown(true).allow(null);

const common = {
  model: Joi.string().min(1).required(),
  messages: Joi.array()
    .items(message)
    .min(1)
    .has(Joi.object({ role: Joi.valid('user', 'assistant') }).unknown())
    .messages({ 'array.hasUnknown': "'messages' needs at least one user or assistant message besides system messages." })
    .required(),
  system: Joi.alternatives(Joi.string().allow(''), Joi.array().items(block)),
  tools: Joi.array().items(tool),
  tool_choice: Joi.object({
    type: Joi.string().valid('auto', 'any', 'tool', 'none').required(),
    name: Joi.when('type', { is: 'tool', then: Joi.string().required(), otherwise: Joi.forbidden() }),
    disable_parallel_tool_use: Joi.boolean(),
  }),
  thinking,
  // effort and structured output; docs/dialects.md says what each does on a translated upstream.
  output_config: Joi.object({ effort: Joi.string().valid('low', 'medium', 'high', 'xhigh', 'max').allow(null), format: jsonFormat }).unknown(true),
  output_format: jsonFormat,
  context_management: Joi.object().unknown(true).allow(null),
};

/** `POST /v1/messages`: Anthropic's fields; unknown top-level fields are accepted (and passed on natively). */
export const messagesSchema = Joi.object({
  ...common,
  max_tokens: Joi.number().integer().min(1).required(),
  stop_sequences: Joi.array().items(Joi.string()),
  temperature: Joi.number().min(0).max(1),
  top_p: Joi.number().min(0).max(1),
  top_k: Joi.number().integer().min(0),
  metadata: Joi.object({ user_id: Joi.string().allow(null, '') }).unknown(true),
  stream: Joi.boolean(),
}).unknown(true);

/** `POST /v1/messages/count_tokens`: the same request; `max_tokens` is optional and ignored. */
export const countTokensSchema = Joi.object({
  ...common,
  max_tokens: Joi.number().integer().min(1),
}).unknown(true);
