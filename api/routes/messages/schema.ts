import Joi from 'joi';
import { anthropicFetchTool, anthropicSearchTool } from '../../dispatch/native-search/schema';
import { continuesThread, toolPairingMessages, toolsPaired } from './tool-pairing';
import { ANTHROPIC_FETCH_TOOL } from '../../dialects/messages/native';

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

/**
 * An image's base64 source: Anthropic takes the four types of Base64ImageSource.media_type and refuses
 * others ("messages.N.content.M.image.source.base64.media_type: Input should be 'image/jpeg',
 * 'image/png', 'image/gif' or 'image/webp'", the message Claude Code knows); a translated upstream was
 * sent any type.
 */
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const imageSourceOf = (content: Joi.Schema) =>
  sourceOf(content).when(Joi.object({ type: 'base64' }).unknown(), { then: Joi.object({ media_type: Joi.string().valid(...IMAGE_TYPES) }) });

const textBlock = Joi.object({ type: Joi.string().required(), text: Joi.string().allow('').required() }).unknown(true);
const imageBlock = Joi.object({ type: Joi.string().required(), source: imageSourceOf(Joi.any()).required() }).unknown(true);

/** A `content` document source's blocks: Anthropic's ContentBlockSourceContent, text or image blocks. */
const sourceContent = Joi.alternatives().conditional('.type', {
  switch: [
    { is: 'text', then: textBlock },
    { is: 'image', then: imageBlock },
  ],
  otherwise: Joi.object({ type: Joi.string().valid('text', 'image').required() }).unknown(true),
});

/** A text block where Anthropic takes text alone (TextBlockParam: `system`, a system message, a search result's content). */
const textOnly = Joi.object({ type: Joi.string().valid('text').required(), text: Joi.string().allow('').required() }).unknown(true);

/** Anthropic's SearchResultBlockParam: a `source` and a `title` (strings) and text blocks as `content`. */
const searchResult = Joi.object({
  type: Joi.string().required(),
  source: Joi.string().required(),
  title: Joi.string().allow('').required(),
  content: Joi.array().items(textOnly).required(),
}).unknown(true);

const source = sourceOf(Joi.alternatives(Joi.string(), Joi.array().items(sourceContent)));

/**
 * A tool result's content blocks (text, image, document, search_result are read; others, such as
 * `tool_reference`, pass through): checked as the same blocks of a turn are, so a malformed one is a
 * 400 naming it, never a failure of the gateway's own or a text of "undefined" sent upstream.
 */
const resultBlock = Joi.alternatives().conditional('.type', {
  switch: [
    { is: 'text', then: textBlock },
    { is: 'image', then: imageBlock },
    { is: 'document', then: Joi.object({ type: Joi.string().required(), source: source.required() }).unknown(true) },
    { is: 'search_result', then: searchResult },
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
    { is: 'image', then: imageBlock },
    typed('document', { source: source.required() }),
    typed('tool_use', { id: Joi.string().required(), name: Joi.string().required(), input: Joi.object().unknown(true).required() }),
    typed('tool_result', { tool_use_id: Joi.string().required(), content: Joi.alternatives(Joi.string().allow(''), Joi.array().items(resultBlock)), is_error: Joi.boolean() }),
    typed('thinking', { thinking: Joi.string().allow('').required(), signature: Joi.string().allow('') }),
    typed('redacted_thinking', { data: Joi.string().required() }),
    { is: 'search_result', then: searchResult },
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
  content: Joi.alternatives(Joi.string().allow(''), Joi.array().items(textOnly)).required(),
}).unknown(false);

const message = Joi.alternatives().conditional('.role', { is: 'system', then: systemMessage, otherwise: turn });

/**
 * Tools that have no `name`: a toolset stands for the tools of a server or environment (SDK 1.16
 * BrowserToolset20260801 `browser_toolset_20260801`, ComputerToolset20260801, the beta's BetaMCPToolset
 * `mcp_toolset` with its `mcp_server_name`). Anthropic takes them without a name; the gateway refused
 * them 400 "tools[0].name is required", on an Anthropic-native upstream too.
 */
const TOOLSET = /^(mcp_toolset|[a-z]+_toolset_\d{8})$/;

/**
 * A tool: Anthropic refuses a name outside `^[a-zA-Z0-9_-]{1,128}$` ("tools.N.custom.name: String
 * should match pattern ...", as clients report it) and a custom tool (no `type`, or `custom`) without
 * its `input_schema` (the SDK's Tool requires it); a translated upstream took both as given. A toolset
 * (TOOLSET) has no name.
 */
const tool = Joi.object({
  name: Joi.string()
    .pattern(/^[a-zA-Z0-9_-]{1,128}$/)
    .when('type', { is: Joi.string().pattern(TOOLSET).required(), then: Joi.optional(), otherwise: Joi.required() })
    .messages({ 'string.pattern.base': '{{#label}} should be 1 to 128 of a-z, A-Z, 0-9, underscores and dashes' }),
  description: Joi.string().allow(''),
  input_schema: Joi.when('type', { is: Joi.valid('custom').optional(), then: Joi.object().unknown(true).required(), otherwise: Joi.object().unknown(true) }),
  type: Joi.string(),
})
  .unknown(true)
  .when(Joi.object({ type: Joi.string().pattern(/^web_search_\d{8}$/) }).unknown(), { then: anthropicSearchTool })
  .when(Joi.object({ type: Joi.string().pattern(ANTHROPIC_FETCH_TOOL) }).unknown(), { then: anthropicFetchTool });

/**
 * Anthropic's ThinkingConfigParam (SDK 1.16): `enabled` with an integer `budget_tokens` of at least
 * 1,024 ("Must be ≥1024"), `adaptive`, `disabled` or `between_tools`; `display` `summarized`,
 * `omitted` or null. Refused on every upstream as Anthropic refuses it: on a translated one the
 * field went unchecked (a Bedrock Claude deployment, or an Anthropic one in a mixed pool, then
 * refused it after a lane was used; an OpenAI-compatible one answered as if it were valid). A budget
 * under 1,024 in Anthropic's words (BUDGET_MIN, as llm.js issue 30 and LibreChat issue 8346 quote
 * them); one at or above `max_tokens` is refused by the handler, which knows the beta header
 * (thinking-budget.ts).
 */
const BUDGET_MIN = 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
const thinking = Joi.object({
  type: Joi.string().valid('enabled', 'adaptive', 'disabled', 'between_tools').required(),
  budget_tokens: Joi.when('type', { is: 'enabled', then: Joi.number().integer().min(1024).required().messages({ 'number.min': BUDGET_MIN }) }),
  display: Joi.string().valid('summarized', 'omitted').allow(null),
}).unknown(true);

/** Structured outputs (`output_config.format`, and the beta's older `output_format`). */
const jsonFormat = Joi.object({ type: Joi.string().valid('json_schema').required(), schema: Joi.object().unknown(true).required() }).unknown(true).allow(null);

/**
 * Anthropic's refusals of `tools` and `tool_choice` that do not fit together, in its words (400
 * invalid_request_error; Anthropic's bodies as clients quote them): two tools of one name, server
 * tools included ("tools: Tool names must be unique.", claude-code issue 10687, vscode issue 276110);
 * a choice of `auto`, `any` or `tool` without tools, absent or empty ("tool_choice may only be
 * specified while providing tools.", a Bedrock Claude answer relayed by OpenRouter, and gateways'
 * code that drops the choice for it); a `tool` choice naming none of the tools ("Tool 'x' not found
 * in provided tools", langchainjs pull requests 8928 and 10519). `none` without tools is left alone:
 * Anthropic's tool-use document makes it the default when no tools are provided, and one
 * third-party comment says every choice is refused; the evidence disagrees. The choice is not checked
 * when tools may come from elsewhere (the SDK's types): a continued `thread` (its tools are held by
 * the server; the SDK's tool runner sends the choice without tools then), `mcp_servers`, or a
 * `tool_addition` (or `compaction`, whose `tool_changes` add tools) block in `messages`. Checked once
 * every field is of its type, so a malformed choice or tool keeps its own message.
 */
const TOOL_NAMES_UNIQUE = 'tools: Tool names must be unique.';
type ToolsBody = { tools?: Array<{ name: string }>; tool_choice?: { type: string; name?: string }; thread?: unknown; mcp_servers?: unknown; messages: Array<{ content: unknown }> };
const ELSEWHERE_BLOCKS = new Set(['tool_addition', 'compaction']);
function toolsFromElsewhere(body: ToolsBody): boolean {
  if (continuesThread(body)) return true;
  if (Array.isArray(body.mcp_servers) && body.mcp_servers.length) return true;
  return body.messages.some((m) => Array.isArray(m.content) && m.content.some((b: { type?: string }) => ELSEWHERE_BLOCKS.has(String(b.type))));
}
function choiceFitsTools(body: ToolsBody, helpers: Joi.CustomHelpers) {
  const choice = body.tool_choice;
  if (!choice || choice.type === 'none' || toolsFromElsewhere(body)) return body;
  if (!body.tools?.length) return helpers.error('toolChoice.withoutTools');
  if (choice.type === 'tool' && !body.tools.some((t) => t.name === choice.name)) return helpers.error('toolChoice.notFound', { name: choice.name });
  return body;
}
const toolChoiceMessages = {
  'toolChoice.withoutTools': 'tool_choice may only be specified while providing tools.',
  'toolChoice.notFound': "Tool '{#name}' not found in provided tools",
};

/**
 * Top-level request options of SDK 1.16's MessageCreateParamsBase, checked for their types and values
 * on every upstream, in the words Anthropic's validation uses ("service_tier: Input should be 'auto' or
 * 'standard_only'"): before, a bad value reached an Anthropic-native upstream to be refused there after
 * a lane was used, or was dropped unsaid by a translated one. What a translated upstream cannot honour
 * is refused there (native-only.ts).
 */
const enumOf = (field: string, values: string[], nullable: boolean) => {
  const words = `${field}: Input should be ${values.map((v) => `'${v}'`).join(' or ')}`;
  const schema = Joi.string().valid(...values);
  return (nullable ? schema.allow(null) : schema).messages({ 'any.only': words, 'string.base': words, 'string.empty': words });
};
const aString = (field: string) => Joi.string().allow('').messages({ 'string.base': `${field}: Input should be a valid string` });
/** SkillParams: `skill_id`, `type` `anthropic` or `custom`, an optional `version`. */
const skill = Joi.object({ skill_id: Joi.string().required(), type: Joi.string().valid('anthropic', 'custom').required(), version: Joi.string() }).unknown(false);
const options = {
  // MessageCreateParamsBase.service_tier?: 'auto' | 'standard_only' (no null)
  service_tier: enumOf('service_tier', ['auto', 'standard_only'], false),
  // inference_geo?: string | null (the workspace's default_inference_geo when absent)
  inference_geo: aString('inference_geo').allow(null),
  // MessageCreateParamsContainer: a container id, or ContainerParams {id?, skills?}
  container: Joi.alternatives(Joi.string(), Joi.object({ id: Joi.string().allow(null), skills: Joi.array().items(skill).allow(null) }).unknown(false)).allow(null),
  // DiagnosticsParam {previous_message_id?: string | null}
  diagnostics: Joi.object({ previous_message_id: Joi.string().allow(null) }).unknown(false).allow(null),
};

const common = {
  model: Joi.string().min(1).required(),
  // speed?: 'standard' | 'fast' | null, on messages and count_tokens alike
  speed: enumOf('speed', ['standard', 'fast'], true),
  messages: Joi.array()
    .items(message)
    .min(1)
    .has(Joi.object({ role: Joi.valid('user', 'assistant') }).unknown())
    .messages({ 'array.hasUnknown': "'messages' needs at least one user or assistant message besides system messages." })
    .required(),
  // MessageCreateParams.system: a string or text blocks (TextBlockParam) only, as Anthropic refuses others; a translated upstream dropped them unsaid
  system: Joi.alternatives(Joi.string().allow(''), Joi.array().items(textOnly)),
  tools: Joi.array().items(tool).unique('name', { ignoreUndefined: true }).messages({ 'array.unique': TOOL_NAMES_UNIQUE }),
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

const BLANK_STOP = 'stop_sequences: each stop sequence must contain non-whitespace';

/** `POST /v1/messages`: Anthropic's fields; unknown top-level fields are accepted (and passed on natively). */
export const messagesSchema = Joi.object({
  ...common,
  // 0 is Anthropic's prompt-cache pre-warming, for an Anthropic-native upstream only (native-only.ts)
  max_tokens: Joi.number().integer().min(0).required(),
  // Anthropic refuses a stop sequence without a non-whitespace character, in these words (a translated upstream stopped at the first space or newline)
  stop_sequences: Joi.array().items(Joi.string().pattern(/\S/).messages({ 'string.empty': BLANK_STOP, 'string.pattern.base': BLANK_STOP })),
  temperature: Joi.number().min(0).max(1),
  top_p: Joi.number().min(0).max(1),
  top_k: Joi.number().integer().min(0),
  metadata: Joi.object({ user_id: Joi.string().allow(null, '') }).unknown(true),
  stream: Joi.boolean(),
  ...options,
})
  .unknown(true)
  .custom(choiceFitsTools)
  .custom(toolsPaired)
  .messages({ ...toolChoiceMessages, ...toolPairingMessages });

/**
 * `POST /v1/messages/count_tokens`: the same request; `max_tokens` is optional and ignored. Tool
 * calls and results that do not pair up (tool-pairing.ts) are not checked here: no evidence shows
 * Anthropic refusing them when counting.
 */
export const countTokensSchema = Joi.object({
  ...common,
  max_tokens: Joi.number().integer().min(0),
})
  .unknown(true)
  .custom(choiceFitsTools)
  .messages(toolChoiceMessages);
