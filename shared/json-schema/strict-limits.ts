/**
 * OpenAI's Structured Outputs size limits for a strict schema (a strict function's `parameters`, a
 * strict json_schema response format's `schema`), as its guide documents them
 * (platform.openai.com/docs/guides/structured-outputs, "Supported schemas"; the numbers raised in
 * 2025 from 100 properties, 5 levels, 15,000 characters, 500 enum values and 7,500, as copies of the
 * guide in public repositories show):
 * - "A schema may have up to 5000 object properties total, with up to 10 levels of nesting."
 * - "total string length of all property names, definition names, enum values, and const values
 *   cannot exceed 120,000 characters."
 * - "A schema may have up to 1000 enum values across all enum properties."
 * - "For a single enum property with string values, the total string length of all enum values
 *   cannot exceed 15,000 characters when there are more than 250 enum values."
 *
 * The reasons are OpenAI's words as its 400s are quoted (after "Invalid schema for function '<name>': "
 * or "Invalid schema for response_format '<name>': "):
 * - nesting: "11 levels of nesting exceeds limit of 10." (dotslashderek/jsonschema-llm's stress
 *   report, 2026, for its combo_depth_10_width_2 fixture: a root object and ten nested objects, the
 *   last with string properties; "14 levels of nesting exceeds limit of 10." in xavierzheng/pxgpt's
 *   tests, measured against gpt-5.6-luna; "6 levels of nesting exceeds limit of 5." in tidyverse/ellmer
 *   issue 671 under the old limit);
 * - properties: "6000 parameters exceeds limit of 5000." (xavierzheng/pxgpt, gpt-5.6-luna, 2026;
 *   "Invalid schema for function 'X': 413 parameters exceeds limit of 100." under the old limit);
 * - enum values: "Expected at most 1000 enum values in total within a single schema when using
 *   structured outputs, but received 1008. Consider reducing the number of enums, or use 'strict:
 *   false' to opt out of structured outputs." (a production log quoted in a public repository, 2026;
 *   the same sentence with 500 in the OpenAI community thread "500 Enums Limitation in Structured
 *   Output", 2024);
 * - a large string enum: "Expected at most 15000 total characters across enum values when there are
 *   more than 250 enum values, but received 15342. ..." (danielchalmers/AutoTriage's tests quote it
 *   as OpenAI's; their copy of the enum-count sentence ends "or opt out of structured outputs by
 *   setting 'strict: false'." where the production logs above end "or use 'strict: false' to opt out
 *   of structured outputs.", so the ending here is the logs');
 * - total characters: OpenAI's words were not found quoted anywhere; the sentence is the gateway's,
 *   in the style of the enum ones.
 *
 * How OpenAI counts is not documented; the gateway counts so that a schema it refuses is one OpenAI
 * refuses (an uncertain case goes upstream, whose own answer it gets):
 * - levels: the steps from the root to the deepest value along `properties`, `items` (and
 *   `prefixItems`, draft-07 tuple `items`) and an `additionalProperties` schema, which gives the
 *   jsonschema-llm fixture its 11; `anyOf` branches add none (jsonschema-llm counts the same way,
 *   "maps 1:1 to OpenAI's nesting count"); a `$ref` is not followed (a recursive schema would be
 *   endless, and whether OpenAI counts through references is not known) and a definition counts from
 *   its own place, as a root;
 * - properties: every key of every `properties` object, definitions and `anyOf` branches included;
 * - characters: Unicode code points, as Python's `len` counts them; only string enum and const values
 *   (a number's or null's length is not known to count);
 * - a large enum: more than 250 values (of any type) whose string values exceed 15,000 characters.
 * The limits are checked after the strict rules (tool-schemas.ts strictProblem), in the order above;
 * OpenAI's own order is not known.
 */
import { isRecord } from '../is-record';

type Obj = Record<string, unknown>;

const MAX_LEVELS = 10;
const MAX_PROPERTIES = 5000;
const MAX_ENUM_VALUES = 1000;
const MAX_TOTAL_CHARS = 120_000;
/** An enum with more values than this is held to LARGE_ENUM_MAX_CHARS. */
const LARGE_ENUM_VALUES = 250;
const LARGE_ENUM_MAX_CHARS = 15_000;

const OPT_OUT = "use 'strict: false' to opt out of structured outputs.";

interface Tally {
  properties: number;
  enumValues: number;
  chars: number;
  /** The string characters of the first enum of more than LARGE_ENUM_VALUES values over LARGE_ENUM_MAX_CHARS. */
  largeEnumChars?: number;
}

/** A string's length in Unicode code points (Python's `len`), not UTF-16 units. */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function tallyEnum(values: unknown[], t: Tally): void {
  t.enumValues += values.length;
  let chars = 0;
  for (const v of values) if (typeof v === 'string') chars += codePoints(v);
  t.chars += chars;
  if (t.largeEnumChars === undefined && values.length > LARGE_ENUM_VALUES && chars > LARGE_ENUM_MAX_CHARS) t.largeEnumChars = chars;
}

/** A member schema's levels below its parent: one step, and the member's own. */
const below = (sub: unknown, t: Tally, levels: number) => Math.max(levels, 1 + (isRecord(sub) ? measure(sub, t) : 0));

/** Tallies `s` and everything under it into `t`; returns its levels (steps to its deepest value). */
function measure(s: Obj, t: Tally): number {
  let levels = 0;
  if (Array.isArray(s.enum)) tallyEnum(s.enum, t);
  if (typeof s.const === 'string') t.chars += codePoints(s.const);
  if (isRecord(s.properties)) {
    for (const [name, sub] of Object.entries(s.properties)) {
      t.properties++;
      t.chars += codePoints(name);
      levels = below(sub, t, levels);
    }
  }
  if (isRecord(s.items)) levels = below(s.items, t, levels);
  for (const k of ['prefixItems', 'items']) {
    const list = s[k];
    if (Array.isArray(list)) for (const sub of list) levels = below(sub, t, levels);
  }
  if (isRecord(s.additionalProperties)) levels = below(s.additionalProperties, t, levels);
  for (const k of ['anyOf', 'oneOf', 'allOf']) {
    const list = s[k];
    if (Array.isArray(list)) for (const sub of list) if (isRecord(sub)) levels = Math.max(levels, measure(sub, t));
  }
  if (isRecord(s.not)) measure(s.not, t);
  return levels;
}

/** Tallies the definitions under `s` (at any depth), each measured as a root; returns their deepest levels. */
function measureDefinitions(s: Obj, t: Tally): number {
  let levels = 0;
  for (const k of ['$defs', 'definitions']) {
    const defs = s[k];
    if (!isRecord(defs)) continue;
    for (const [name, sub] of Object.entries(defs)) {
      t.chars += codePoints(name);
      if (isRecord(sub)) levels = Math.max(levels, measure(sub, t), measureDefinitions(sub, t));
    }
  }
  return levels;
}

/**
 * The first of OpenAI's Structured Outputs limits a strict schema exceeds, in OpenAI's words (the part
 * after "Invalid schema for ...: "), or undefined. Definitions nested in definitions are found; ones
 * nested elsewhere than the root or a definition are not (neither OpenAI's SDK helpers nor pydantic
 * write them there).
 */
export function strictLimitProblem(schema: Obj): string | undefined {
  const t: Tally = { properties: 0, enumValues: 0, chars: 0 };
  const levels = Math.max(measure(schema, t), measureDefinitions(schema, t));
  if (levels > MAX_LEVELS) return `${levels} levels of nesting exceeds limit of ${MAX_LEVELS}.`;
  if (t.properties > MAX_PROPERTIES) return `${t.properties} parameters exceeds limit of ${MAX_PROPERTIES}.`;
  if (t.enumValues > MAX_ENUM_VALUES) {
    return `Expected at most ${MAX_ENUM_VALUES} enum values in total within a single schema when using structured outputs, but received ${t.enumValues}. Consider reducing the number of enums, or ${OPT_OUT}`;
  }
  if (t.largeEnumChars !== undefined) {
    return `Expected at most ${LARGE_ENUM_MAX_CHARS} total characters across enum values when there are more than ${LARGE_ENUM_VALUES} enum values, but received ${t.largeEnumChars}. Consider reducing the number of enums, or ${OPT_OUT}`;
  }
  if (t.chars > MAX_TOTAL_CHARS) {
    // the gateway's words: OpenAI's for this limit were not found quoted
    return `Expected at most ${MAX_TOTAL_CHARS} total characters across property names, definition names, enum values and const values within a single schema when using structured outputs, but received ${t.chars}. Consider reducing the size of the schema, or ${OPT_OUT}`;
  }
  return undefined;
}
