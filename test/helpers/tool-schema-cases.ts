/**
 * Function tool schemas OpenAI's API refuses, with the reason it gives (after "Invalid schema for
 * function '<name>': "), shared by the chat and Responses tests of shared/json-schema/tool-schemas.ts.
 */

/** Not a JSON Schema, or not an object schema: refused with or without `strict`. */
export const notSchemas: Array<[string, unknown, string]> = [
  ['bad_type', { type: 'object', properties: { city: { type: 'strin' } } }, "'strin' is not one of ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']."],
  ['bad_items', { type: 'object', properties: { list: { type: 'array', items: 3 } } }, "3 is not of type 'object', 'boolean'."],
  ['bad_required', { type: 'object', properties: { a: { type: 'string' } }, required: 'a' }, "'a' is not of type 'array'."],
  ['draft3_required', { type: 'object', properties: { a: { type: 'string', required: true } } }, "True is not of type 'array'."],
  ['bad_min', { type: 'object', properties: { a: { type: 'string', minLength: -1 } } }, '-1 is less than the minimum of 0.'],
  ['string_root', { type: 'string' }, `schema must be a JSON Schema of 'type: "object"', got 'type: "string"'.`],
  ['union_root', { anyOf: [{ type: 'object', properties: {} }] }, `schema must be a JSON Schema of 'type: "object"', got 'type: "None"'.`],
];

/** The schemas of notSchemas that are not JSON Schemas at all (the rest have a root other than an object). */
export const metaBreaks = notSchemas.filter(([, , why]) => !why.startsWith('schema must be'));

/** Schemas that break OpenAI's Structured Outputs rules: refused with `strict: true` only. */
export const strictBreaks: Array<[string, unknown, string]> = [
  ['open_root', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, "In context=(), 'additionalProperties' is required to be supplied and to be false."],
  ['open_root_true', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: true }, "In context=(), 'additionalProperties' is required to be supplied and to be false."],
  [
    'open_nested',
    { type: 'object', properties: { p: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] } }, required: ['p'], additionalProperties: false },
    "In context=('properties', 'p'), 'additionalProperties' is required to be supplied and to be false.",
  ],
  [
    'open_items',
    { type: 'object', properties: { l: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] } } }, required: ['l'], additionalProperties: false },
    "In context=('properties', 'l', 'items'), 'additionalProperties' is required to be supplied and to be false.",
  ],
  [
    'optional_field',
    { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location'], additionalProperties: false },
    "In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'unit'.",
  ],
  [
    'optional_in_union',
    { type: 'object', properties: { r: { anyOf: [{ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'], additionalProperties: false }, { type: 'null' }] } }, required: ['r'], additionalProperties: false },
    "In context=('properties', 'r', 'anyOf', '0'), 'required' is required to be supplied and to be an array including every key in properties. Missing 'b'.",
  ],
  [
    'extra_required',
    { type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b'], additionalProperties: false },
    "In context=(), 'required' is required to be supplied and to be an array including every key in properties. Extra required key 'b' supplied.",
  ],
  // keywords OpenAI's strict mode does not permit (what z.discriminatedUnion and conditional schemas write)
  [
    'one_of',
    { type: 'object', properties: { k: { oneOf: [{ type: 'string' }, { type: 'number' }] } }, required: ['k'], additionalProperties: false },
    "In context=('properties', 'k'), 'oneOf' is not permitted.",
  ],
  ['all_of_root', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false, allOf: [{ required: ['a'] }] }, "In context=(), 'allOf' is not permitted."],
  [
    'if_in_items',
    { type: 'object', properties: { l: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'], additionalProperties: false, if: { required: ['x'] }, then: { required: ['x'] } } } }, required: ['l'], additionalProperties: false },
    "In context=('properties', 'l', 'items'), 'if' is not permitted.",
  ],
  ['empty_strict', {}, `schema must be a JSON Schema of 'type: "object"', got 'type: "None"'.`],
  // OpenAI refuses this without strict too; Claude, Gemini and OpenAI-compatible servers take it (an MCP tool without parameters)
  ['no_properties', { type: 'object' }, 'In context=(), object schema missing properties.'],
];
