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

/** An object schema as strict mode requires it: closed, every property required. */
const closed = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...extra });
/** A root object over `n` nested objects, the last with a string property: n + 1 levels (steps to the string). */
const nested = (n: number): Record<string, unknown> => (n === 0 ? closed({ x: { type: 'string' } }) : closed({ n: nested(n - 1) }));
/** `count` string properties named prefix0, prefix1, ... */
const strings = (prefix: string, count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, { type: 'string' }]));
const words = (count: number, width: number) => Array.from({ length: count }, (_, i) => String(i).padStart(width, 'w'));
/** 4 enums of 250 values, the last of `last`: 1000 values when `last` is 250. */
const enums = (last: number) => closed({ e0: { type: 'string', enum: words(250, 3) }, e1: { type: 'string', enum: words(250, 3) }, e2: { type: 'string', enum: words(250, 3) }, e3: { type: 'string', enum: words(last, 3) } });
/** One string enum of 251 values whose characters total `chars` (60 each but the last). */
const largeEnum = (chars: number) => closed({ e: { type: 'string', enum: [...words(250, 60), 'z'.repeat(chars - 250 * 60)] } });
/**
 * Property names (40,002 characters), a definition name (1), an enum value (40,000 emoji: 40,000 code
 * points, 80,000 UTF-16 units) and a const value of `constChars`: 80,003 + `constChars` in all.
 */
const longNames = (constChars: number) =>
  closed({ ['a'.repeat(40_000)]: { type: 'string', enum: ['😀'.repeat(40_000)] }, c: { type: 'string', const: 'k'.repeat(constChars) }, r: { $ref: '#/$defs/d' } }, { $defs: { d: { type: 'string' } } });

/**
 * OpenAI's Structured Outputs limits (shared/json-schema/strict-limits.ts) and `$ref` rule, each just
 * over (refused with `strict: true` only, the reason in OpenAI's words) and just under (served).
 */
export const limitBreaks: Array<[string, unknown, string]> = [
  ['eleven_levels', nested(10), '11 levels of nesting exceeds limit of 10.'],
  ['eleven_levels_in_array', closed({ l: { type: 'array', items: nested(8) } }), '11 levels of nesting exceeds limit of 10.'],
  ['eleven_levels_in_def', closed({ d: { $ref: '#/$defs/deep' } }, { $defs: { deep: nested(10) } }), '11 levels of nesting exceeds limit of 10.'],
  ['properties_5001', closed({ ...strings('p', 4000), nested: closed(strings('q', 1000)) }), '5001 parameters exceeds limit of 5000.'],
  [
    'enum_values_1001',
    enums(251),
    "Expected at most 1000 enum values in total within a single schema when using structured outputs, but received 1001. Consider reducing the number of enums, or use 'strict: false' to opt out of structured outputs.",
  ],
  [
    'large_enum_15001',
    largeEnum(15_001),
    "Expected at most 15000 total characters across enum values when there are more than 250 enum values, but received 15001. Consider reducing the number of enums, or use 'strict: false' to opt out of structured outputs.",
  ],
  [
    'chars_120001',
    longNames(39_998),
    "Expected at most 120000 total characters across property names, definition names, enum values and const values within a single schema when using structured outputs, but received 120001. Consider reducing the size of the schema, or use 'strict: false' to opt out of structured outputs.",
  ],
  ['dangling_ref', closed({ d: { $ref: '#/$defs/Inner' } }), "In context=('properties', 'd'), reference to component '#/$defs/Inner' which was not found in the schema."],
  [
    'ref_to_other_defs',
    closed({ l: { type: 'array', items: { $ref: '#/definitions/node' } } }, { $defs: { node: closed({ v: { type: 'string' } }) } }),
    "In context=('properties', 'l', 'items'), reference to component '#/definitions/node' which was not found in the schema.",
  ],
];

/** Schemas at OpenAI's limits, or with references that resolve: served with `strict: true`. */
export const limitFits: Array<[string, unknown]> = [
  ['ten_levels', nested(9)],
  ['ten_levels_in_array', closed({ l: { type: 'array', items: nested(7) } })],
  ['properties_5000', closed({ ...strings('p', 4000), nested: closed(strings('q', 999)) })],
  ['enum_values_1000', enums(250)],
  ['large_enum_15000', largeEnum(15_000)],
  ['enum_250_long', closed({ e: { type: 'string', enum: words(250, 80) } })],
  ['chars_120000', longNames(39_997)],
  [
    'refs_resolving',
    closed(
      { root: { type: 'array', items: { $ref: '#' } }, def: { $ref: '#/$defs/a~1b' }, legacy: { anyOf: [{ $ref: '#/definitions/node' }, { type: 'null' }] } },
      { $defs: { 'a/b': closed({ v: { type: 'string' } }) }, definitions: { node: closed({ next: { anyOf: [{ $ref: '#/definitions/node' }, { type: 'null' }] } }) } },
    ),
  ],
];
