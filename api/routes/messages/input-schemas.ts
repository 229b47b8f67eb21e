/**
 * A custom tool's `input_schema` that Anthropic refuses, refused as it refuses it, on every upstream
 * (400 `invalid_request_error`, before any lane, upstream call or bill). Before, such a schema went
 * to an Anthropic-native upstream (refused there after a lane was taken) or was translated for an
 * OpenAI-compatible, Gemini or Bedrock upstream, which refused it in its own words or served it.
 *
 * Anthropic's rules and words, as its 400 bodies are quoted by clients (N is the tool's index in
 * `tools`, server tools counted):
 * - `type` absent: "tools.N.custom.input_schema.type: Field required" (Kilo-Org/kilocode issue
 *   12238); another `type`: "tools.N.custom.input_schema.type: Input should be 'object'" (the SDK's
 *   Tool.InputSchema has `type: 'object'`; the words are its validator's for a literal, as for
 *   `service_tier`, not quoted by a client). A `{type: 'object'}` without properties is taken.
 * - `anyOf`, `oneOf` or `allOf` at the root: "tools.N.custom.input_schema: input_schema does not
 *   support oneOf, allOf, or anyOf at the top level" (anthropics/claude-code issue 7876).
 * - not a JSON Schema of draft 2020-12 (Ajv's meta-schema validation; a draft-07 `$schema` is only
 *   a keyword, as Claude Code's and the MCP SDKs' zod schemas declare it, but draft-07's array
 *   `items` is not 2020-12: refused by Anthropic, AlexGladkov/claude-in-mobile issue 57 and
 *   openclaw/openclaw issue 98588, which also lists what it takes: `patternProperties`, `anyOf` with
 *   null, `{}` subschemas, a dangling `$ref`, type lists, `format`, `const`, `enum`): "tools.N.custom.input_schema: JSON schema is invalid. It must match
 *   JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at
 *   https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview." (anthropics/claude-code
 *   issues 586, 7365, 63673 and 86665; the link is the newest of the three the years' bodies give).
 * `properties: null` and `required: null` are taken (the SDK's InputSchema allows them).
 *
 * Not cached: the compiled meta-schema checks a tool schema of Claude Code's size in about the time
 * JSON.stringify takes to write the cache key for it.
 */
import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';
import { metaValidators } from '../../../shared/json-schema/tool-schemas';

type Obj = Record<string, unknown>;

const INVALID =
  'JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview.';
const TOP_LEVEL_UNION = 'input_schema does not support oneOf, allOf, or anyOf at the top level';

/** A custom tool (no `type`, or `custom`); server tools and toolsets carry no schema of the client's. */
const isCustom = (tool: unknown): tool is { input_schema?: unknown } => isRecord(tool) && (tool.type === undefined || tool.type === 'custom');

/** The field-level refusal of the root's `type` (Anthropic's request validation, before the schema's). */
function typeProblem(schema: Obj): string | undefined {
  if (schema.type === undefined) return '.type: Field required';
  if (schema.type !== 'object') return ".type: Input should be 'object'";
  return undefined;
}

/** The schema without the nulls the SDK allows for `properties` and `required`. */
function withoutNulls(schema: Obj): Obj {
  if (schema.properties !== null && schema.required !== null) return schema;
  const copy: Obj = {};
  for (const [k, v] of Object.entries(schema)) if (!((k === 'properties' || k === 'required') && v === null)) copy[k] = v;
  return copy;
}

/** Why Anthropic refuses this (type-checked) schema, after `tools.N.custom.input_schema: `, or undefined. */
function schemaProblem(schema: Obj): string | undefined {
  if (['anyOf', 'oneOf', 'allOf'].some((k) => k in schema)) return TOP_LEVEL_UNION;
  return metaValidators().v2020(withoutNulls(schema)) ? undefined : INVALID;
}

/**
 * Refuses the first custom tool whose `input_schema` Anthropic refuses (the body is past the messages
 * schema, which requires the object): every root `type` first, as Anthropic's field validation runs
 * before its schema check, then the schemas.
 */
export function refuseInvalidInputSchemas(tools: unknown): void {
  if (!Array.isArray(tools)) return;
  const custom: Array<[number, Obj]> = [];
  for (const [i, tool] of tools.entries()) if (isCustom(tool) && isRecord(tool.input_schema)) custom.push([i, tool.input_schema]);
  for (const [i, schema] of custom) {
    const problem = typeProblem(schema);
    if (problem) throw new ApiError(400, 'invalid_request', `tools.${i}.custom.input_schema${problem}`);
  }
  for (const [i, schema] of custom) {
    const problem = schemaProblem(schema);
    if (problem) throw new ApiError(400, 'invalid_request', `tools.${i}.custom.input_schema: ${problem}`);
  }
}
