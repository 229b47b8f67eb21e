import Joi from 'joi';
import { paramOf } from '../validate';

/**
 * A name as OpenAI requires it of a function tool (FunctionObject: "a-z, A-Z, 0-9, or contain
 * underscores and dashes, with a maximum length of 64") and of a json_schema response format.
 */
export const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A function tool's name, refused in those words when it is not one. */
export const openaiFunctionName = () =>
  Joi.string().pattern(OPENAI_NAME).required().messages({ 'string.pattern.base': '{{#label}} must be 1 to 64 of a-z, A-Z, 0-9, underscores and dashes' });

/**
 * The same name refused in OpenAI's own words and codes: one longer than 64 as its
 * string_above_max_length (api/routes/openai-words.ts), another character 400 `invalid_value`
 * naming the field, "Invalid 'response_format.json_schema.name': string does not match pattern.
 * Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'." (OpenAI's answer as public code
 * quotes it from production runs, 2026-04 and later, found with the `search` tool's find_string; its
 * code as its API answers the same check of `tools[0].function.name` and `messages[N].name`,
 * `invalid_value`, as a probe of its API with its x-request-id shows it). Chat's function tool names
 * and json_schema response format name (the Responses API keeps openaiFunctionName's words).
 */
const NAME_CHARS = /^[a-zA-Z0-9_-]+$/;
export const openaiNameInItsWords = () =>
  Joi.string()
    .max(64)
    .custom((v: string, helpers) => (NAME_CHARS.test(v) ? v : helpers.error('openaiName.pattern', { errorCode: 'invalid_value', field: paramOf(helpers.state.path) })))
    .messages({ 'openaiName.pattern': `Invalid '{#field}': string does not match pattern. Expected a string that matches the pattern '${NAME_CHARS.source}'.` })
    .required();
