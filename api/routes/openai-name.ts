import Joi from 'joi';
import { paramOf } from '../validate';

/**
 * A name as OpenAI requires it of a function tool (FunctionObject: "a-z, A-Z, 0-9, or contain
 * underscores and dashes, with a maximum length of 64") and of a json_schema response format (the
 * fast path's check: api/routes/chat/fast-check.ts).
 */
export const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The longest function name the Responses API takes, for a tool of `tools` (`tools[N].name`), a
 * namespace's member and a tool an input item loads: 128. The vendored OpenAPI document's
 * FunctionToolParam (a namespace's member) has `maxLength: 128`, its top-level FunctionTool no
 * limit; a public record of probes (2026-10, gpt-6-luna, found with the search tool's find_string)
 * saw OpenAI's Responses API, through Codex's backend and through a relay, accept 128 and refuse 129
 * with "Invalid 'tools[0].name': string too long. Expected a string with maximum length 128", and
 * another public log quotes its refusal of an input item's function name over 128 ("Invalid
 * 'input[565].name': string too long. Expected a string with maximum length 128, but got a string
 * with length 316 instead.", 2026-03). The gateway held them to chat's documented 64 before, a
 * refusal OpenAI does not make. An upstream with a shorter limit of its own refuses a longer name in
 * its own words.
 */
export const RESPONSES_FUNCTION_NAME_MAX = 128;

const NAME_CHARS = /^[a-zA-Z0-9_-]+$/;

/**
 * The same name refused in OpenAI's own words and codes: one longer than `max` as its
 * string_above_max_length (api/routes/openai-words.ts), another character 400 `invalid_value`
 * naming the field, "Invalid 'response_format.json_schema.name': string does not match pattern.
 * Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'." (OpenAI's answer as public code
 * quotes it from production runs, 2026-04 and later, found with the `search` tool's find_string; its
 * code as its API answers the same check of `tools[0].function.name` and `messages[N].name`,
 * `invalid_value`, as a probe of its API with its x-request-id shows it). Chat's function tool names
 * and json_schema response format name; on the Responses API a function tool's name (its refusal of
 * `tools[N].name` in the same words and code: openai/openai-dotnet issue 441, justrach/codegraff issue
 * 930), a namespace member's (`tools[N].tools[M].name`), a tool's an input item loads
 * (`input[N].tools[M].name`) and a json_schema format's (`text.format.name`: "Invalid
 * 'text.format.name': string does not match pattern. ..." and "... string too long. Expected a string
 * with maximum length 64, but got a string with length 65 instead." as public code and a public
 * changelog quote it; a `configuration_update` item's `input[N].text.format.name`).
 *
 * `max`: 64, chat's and a json_schema format's; the Responses API's function names take 128
 * (RESPONSES_FUNCTION_NAME_MAX).
 */
export const openaiNameInItsWords = (max = 64) =>
  Joi.string()
    .max(max)
    .custom((v: string, helpers) => (NAME_CHARS.test(v) ? v : helpers.error('openaiName.pattern', { errorCode: 'invalid_value', field: paramOf(helpers.state.path) })))
    .messages({ 'openaiName.pattern': `Invalid '{#field}': string does not match pattern. Expected a string that matches the pattern '${NAME_CHARS.source}'.` })
    .required();
