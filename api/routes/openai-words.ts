import type Joi from 'joi';
import { ApiError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';
import { paramOf } from '../validate';

/** 'a', 'b', and 'c' (or `last` 'c'; two are 'a' and 'b'), as OpenAI lists the values it takes. */
export const listed = (values: readonly string[], last: string) =>
  values.length === 2 ? `'${values[0]}' ${last} '${values[1]}'` : values.map((v, i) => (i === values.length - 1 && values.length > 1 ? `${last} '${v}'` : `'${v}'`)).join(', ');

/** A JSON value's kind as OpenAI's "but got ... instead" names it. */
export function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a decimal';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v === 'string' ? 'a string' : 'an object';
}

/** A Responses message's roles and `tool_choice`'s modes, in the order OpenAI's refusals list them. */
export const MESSAGE_ROLES = ['assistant', 'system', 'developer', 'user'] as const;
export const TOOL_CHOICE_MODES = ['none', 'auto', 'required'] as const;

/** OpenAI's refusal of a `POST /v1/responses` body with no `input` and nothing else to answer (an empty string or list is none). */
export const NO_INPUT = 'One of "input" or "previous_response_id" or \'prompt\' or \'conversation\' must be provided.';

/** What OpenAI's "Invalid type for 'x': expected …" names at a param, given the plain kind ("a string"): a dialect's own words where they differ. */
type ExpectedAt = (param: string, plain: string) => string;

/** `tool_choice`'s expected kinds, in both dialects' words. */
const TOOL_CHOICE_EXPECTED = `one of an object or ${listed(TOOL_CHOICE_MODES, 'or')}`;

/** The Responses API's own words (`input`, `tool_choice`, `metadata`, `tools`, an input item). */
function responsesExpectedAt(param: string, plain: string): string {
  if (param === 'input') return 'one of a string or array of input items';
  if (param === 'tool_choice') return TOOL_CHOICE_EXPECTED;
  if (param === 'metadata') return 'a metadata object';
  if (param === 'tools') return 'an array of tools';
  if (/^input\[\d+\]$/.test(param) && plain === 'an object') return 'an input item';
  return plain;
}

/**
 * Chat completions' own words: a message's `content` ("Invalid type for 'messages[1].content':
 * expected one of a string or array of objects, but got an object instead.", code invalid_type, as
 * OpenAI's API answered it in pydantic/pydantic-ai issue 2653, gpt-4o) and `tool_choice`.
 */
function chatExpectedAt(param: string, plain: string): string {
  if (/^messages\[\d+\]\.content$/.test(param)) return 'one of a string or array of objects';
  if (param === 'tool_choice') return TOOL_CHOICE_EXPECTED;
  return plain;
}

/** Whether the schema types the number at `path` as an integer (OpenAI's "integer …" words) rather than a decimal. */
function integerAt(schema: Joi.Schema, path: Array<string | number>): boolean {
  try {
    const rules = (schema.extract(path.map(String)).describe() as { rules?: Array<{ name: string }> }).rules ?? [];
    return rules.some((r) => r.name === 'integer');
  } catch {
    return false;
  }
}

const JOI_KIND: Record<string, string> = {
  'string.base': 'a string',
  'boolean.base': 'a boolean',
  'object.base': 'an object',
  'array.base': 'an array',
  'number.base': 'a number',
};
/** The types an alternatives rule takes, as OpenAI lists them ("one of a string or an object"). */
const oneOfTypes = (types: unknown) => `one of ${(Array.isArray(types) ? types : []).map((t) => JOI_KIND[`${String(t)}.base`] ?? String(t)).join(' or ')}`;

/**
 * A validation refusal in the words, codes and params OpenAI's API answers them with (its bodies as
 * clients quote them, docs/dialects.md "Responses dialect"): a missing field `missing_required_parameter`
 * ("Missing required parameter: 'input[0].content'."), a value of the wrong type `invalid_type`
 * ("Invalid type for 'temperature': expected a decimal, but got a string instead."), a value outside
 * the listed ones `invalid_value` ("Invalid value: 'bogus'. Supported values are: 'auto' and
 * 'disabled'."), a number out of range `integer_below_min_value` / `decimal_above_max_value` …
 * ("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10
 * instead."), an empty string `empty_string`, a string, list or object too long
 * `string_above_max_length` / `array_above_max_length` / `object_above_max_properties`, an empty list
 * `empty_array`. Undefined for a rule it has no words for: the caller answers that one as before.
 * An input item's `type` or `role` outside OpenAI's values is named by the item (`input[1]`), as OpenAI names it
 * (the `input` cases are the Responses API's: chat's and legacy completions' schemas have no `input`).
 * `expectedAt`: the dialect's words for a kind (responsesExpectedAt, chatExpectedAt).
 */
function openaiWords(expectedAt: ExpectedAt) {
  return (detail: Joi.ValidationErrorItem, schema: Joi.Schema): ApiError | undefined => refuseInOpenaiWords(detail, schema, expectedAt);
}

function refuseInOpenaiWords(detail: Joi.ValidationErrorItem, schema: Joi.Schema, expectedAt: ExpectedAt): ApiError | undefined {
  const path = detail.path;
  const param = paramOf(path);
  if (param === undefined) return undefined;
  const ctx = (detail.context ?? {}) as { value?: unknown; limit?: unknown; valids?: unknown[]; types?: unknown };
  const value = ctx.value;
  const refuse = (code: string, message: string, at: string | undefined = param) => new ApiError(400, code, message, { param: at });
  const wrongType = (expected: string) => refuse('invalid_type', `Invalid type for '${param}': expected ${expectedAt(param, expected)}, but got ${jsonKind(value)} instead.`);
  const number = () => (integerAt(schema, path) ? 'integer' : 'decimal');
  const bound = (side: 'below minimum' | 'above maximum', op: string) => {
    const n = number();
    return refuse(`${n}_${side === 'below minimum' ? 'below_min' : 'above_max'}_value`, `Invalid '${param}': ${n} ${side} value. Expected a value ${op} ${String(ctx.limit)}, but got ${String(value)} instead.`);
  };
  const emptyInput = param === 'input' && (value === '' || (Array.isArray(value) && value.length === 0));
  switch (detail.type) {
    case 'any.required':
      // a message's role is its discriminator: without one OpenAI names the item, as a role of ''
      if (/^input\[\d+\]\.role$/.test(param)) return refuse('invalid_value', `Invalid value: ''. Supported values are: ${listed(MESSAGE_ROLES, 'and')}.`, param.replace(/\.role$/, ''));
      return refuse('missing_required_parameter', `Missing required parameter: '${param}'.`);
    case 'number.base':
      return wrongType(number() === 'integer' ? 'an integer' : 'a decimal');
    case 'number.integer':
      return wrongType('an integer');
    case 'number.min':
      return bound('below minimum', '>=');
    case 'number.max':
      return bound('above maximum', '<=');
    case 'any.only': {
      const valids = (ctx.valids ?? []).filter((v): v is string => typeof v === 'string');
      // an item's discriminator is named by the item (`input[1]`), as OpenAI names it
      const at = /^input\[\d+\]\.(role|type)$/.test(param) ? param.replace(/\.(role|type)$/, '') : param;
      if (typeof value !== 'string') return refuse('invalid_type', `Invalid type for '${at}': expected one of ${listed(valids, 'or')}, but got ${jsonKind(value)} instead.`, at);
      return refuse('invalid_value', `Invalid value: '${value}'. Supported values are: ${listed(valids, 'and')}.`, at);
    }
    case 'string.empty':
    case 'string.min':
      if (emptyInput) return new ApiError(400, 'missing_required_parameter', NO_INPUT);
      if (value !== '' || (detail.type === 'string.min' && ctx.limit !== 1)) return undefined;
      return refuse('empty_string', `Invalid '${param}': empty string. Expected a string with minimum length 1, but got an empty string instead.`);
    case 'string.max':
      return refuse('string_above_max_length', `Invalid '${param}': string too long. Expected a string with maximum length ${String(ctx.limit)}, but got a string with length ${String((value as string).length)} instead.`);
    case 'array.min':
      if (emptyInput) return new ApiError(400, 'missing_required_parameter', NO_INPUT);
      return (value as unknown[]).length === 0 ? refuse('empty_array', `Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`) : undefined;
    case 'array.max':
      return refuse('array_above_max_length', `Invalid '${param}': array too long. Expected an array with maximum length ${String(ctx.limit)}, but got an array with length ${String((value as unknown[]).length)} instead.`);
    case 'object.max':
      return refuse('object_above_max_properties', `Invalid '${param}': too many properties. Expected an object with at most ${String(ctx.limit)} properties, but got an object with ${Object.keys(value as object).length} properties instead.`);
    case 'alternatives.types':
      // a string that is none of tool_choice's modes is a value OpenAI does not take, not a wrong type
      if (param === 'tool_choice' && typeof value === 'string') return refuse('invalid_value', `Invalid value: '${value}'. Supported values are: ${listed(TOOL_CHOICE_MODES, 'and')}.`);
      return wrongType(oneOfTypes(ctx.types));
    default:
      return detail.type in JOI_KIND ? wrongType(JOI_KIND[detail.type]) : undefined;
  }
}

/** The Responses API's words for a refusal (responsesRefusal adds its answer to an empty model). */
const openaiRefusal = openaiWords(responsesExpectedAt);

/**
 * The Responses routes' refusals (`POST /v1/responses`, its `input_tokens` and `compact`): an empty
 * `model` is not an empty string to OpenAI but a model its lookup does not find, 400
 * `model_not_found`, `param: "model"`, "The requested model '' does not exist." (errors.responsesModelNotFound:
 * its answer on `POST /v1/responses` as recorded against its API in a public conformance note of the
 * Responses API, and as clients quote it for an unset model variable). The same on `input_tokens` and
 * `compact`: the vendored OpenAPI document gives their `model` no minimum length (TokenCountsBody's a
 * string or null, CompactResponseMethodPublicBody's ModelIdsCompaction a string), so '' passes
 * OpenAI's schema there too and meets the same lookup, as an unknown model does on all three
 * (api/dispatch/chat.ts resolveChatModel). They answered `empty_string` before, a refusal of a
 * minimum length OpenAI's document does not set.
 */
export function responsesRefusal(detail: Joi.ValidationErrorItem, schema: Joi.Schema): ApiError | undefined {
  if (detail.type === 'string.empty' && detail.path.length === 1 && detail.path[0] === 'model') return errors.responsesModelNotFound('');
  return openaiRefusal(detail, schema);
}

/**
 * The refusals of the Responses routes whose `model` is a required string, `POST /v1/responses` and
 * `compact`: responsesRefusal's, but a `model` of JSON null, which OpenAI's Responses API words as a
 * string it did not get, "an object": 400 `invalid_type`, `param: "model"`, "Invalid type for 'model':
 * expected a string, but got an object instead." (as public code quotes it: a proxy's conformance test of
 * direct observations of `POST /v1/responses`, 2026-08-30, which also records chat completions and the
 * Images API wording the same null "null"; and a client's comment that an unset model gets that 400; both
 * found with the search tool's find_string; no quote of "got null instead" for this field was found).
 * `compact` words it as create does: no observation of its own was found, and its `model` is the same
 * required string (the vendored document's CompactResponseMethodPublicBody, ModelIdsCompaction), so one
 * wording for both rather than "null" on one route and "an object" on the other. Other fields keep "got
 * null instead", as OpenAI's answers quote it for them. Not on `input_tokens`: its `model` may be null.
 */
export function modelRequiredRefusal(detail: Joi.ValidationErrorItem, schema: Joi.Schema): ApiError | undefined {
  if (detail.type === 'string.base' && detail.path.length === 1 && detail.path[0] === 'model' && detail.context?.value === null) {
    return new ApiError(400, 'invalid_type', "Invalid type for 'model': expected a string, but got an object instead.", { param: 'model' });
  }
  return responsesRefusal(detail, schema);
}

/**
 * Chat completions' and legacy completions' refusals (`POST /v1/chat/completions`, `POST
 * /v1/completions`): the same codes and words. A body without `model` keeps OpenAI's own "you must
 * provide a model parameter" (its code null: the gateway's invalid_request), an empty one its words
 * as before; a `model` of another type is invalid_type as any field's.
 */
const chatWords = openaiWords(chatExpectedAt);
export function chatRefusal(detail: Joi.ValidationErrorItem, schema: Joi.Schema): ApiError | undefined {
  if (detail.path.length === 1 && detail.path[0] === 'model' && detail.type !== 'string.base') return undefined;
  return chatWords(detail, schema);
}
