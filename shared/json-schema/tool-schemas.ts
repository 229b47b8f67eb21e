/**
 * Function tools whose `parameters` OpenAI's API refuses, refused as it refuses them: 400
 * invalid_request_error, code `invalid_function_parameters`, "Invalid schema for function '<name>':
 * <why>.", `param` the parameters' place: `tools[N].function.parameters` on chat completions (its
 * bodies as quoted in langchain-ai/langchain-mcp-adapters issue 137, FoundationAgents/OpenManus
 * issue 1162, lastmile-ai/openai-agents-mcp issue 2, sashirestela/simple-openai issue 177),
 * `tools[N].parameters` on the Responses API, whose function tools are flat (ComposioHQ/composio
 * issue 1829, flanksource/mission-control pull request 2634 quote its bodies). Before, such a
 * schema went to an OpenAI-compatible upstream (refused there after a lane was taken) or was
 * translated for Anthropic, Gemini or Bedrock, which refused it in their own words or served it.
 *
 * Every function tool: `parameters` must be a JSON Schema (Ajv's meta-schema validation, draft
 * 2020-12 or draft-07: a schema either takes is taken; the openai SDK's zod helper writes draft-07),
 * its root of `type: "object"` (a bare `{}`, no parameters, is taken). With `strict: true`, OpenAI's
 * Structured Outputs rules too: the root typed `object` with `properties`, and every object
 * schema (a `type` of `object`, or `properties`) with `additionalProperties: false` and every
 * property in `required`. The reason is OpenAI's wording: python-jsonschema's for a meta-schema
 * failure ("[] is not of type 'object', 'boolean'"), "In context=(<path as a Python tuple>), ..."
 * for the strict rules.
 *
 * Chat's deprecated `functions` get the same check (`param` `functions[N].parameters`, never strict),
 * and a json_schema response format's `schema` (chat's `response_format`, the Responses API's
 * `text.format`) the same machinery and cache (refuseInvalidResponseSchema). With strict, the
 * keywords OpenAI does not permit (NOT_PERMITTED), a `required` key outside `properties`, a local
 * `$ref` that does not resolve, and then the Structured Outputs size limits (strict-limits.ts) too.
 *
 * `strict` is read only when `true` is sent: OpenAI's Responses API documents a default of true, but
 * Codex and other clients send schemas strict mode refuses without `strict` (or with `false`), which the
 * gateway serves. Only run when `tools` (`functions`, a response format) is present; a verdict is cached by the
 * schema's text, its use and `strict`, so a client sending the same tools on every turn pays for the check once
 * (one JSON.stringify of them).
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import draft7 from 'ajv/dist/refs/json-schema-draft-07.json';
import { ApiError } from '../errors/ApiError';
import { isRecord } from '../is-record';
import { refResolves } from './local-ref';
import { strictLimitProblem } from './strict-limits';

type Obj = Record<string, unknown>;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

let meta: { v2020: ValidateFunction; v07: ValidateFunction } | undefined;
/**
 * The two meta-schemas' validators, compiled once (about 100 ms): by a web pod before it listens
 * (api/server.ts, so that no request waits for it), elsewhere at the first request with tools.
 */
export function metaValidators(): { v2020: ValidateFunction; v07: ValidateFunction } {
  if (!meta) {
    const ajv = new Ajv2020({ strict: false, allErrors: false, verbose: true, validateFormats: false, logger: false });
    ajv.addMetaSchema(draft7);
    meta = { v2020: ajv.getSchema(DRAFT_2020)!, v07: ajv.getSchema(DRAFT_07)! };
  }
  return meta;
}

/** A value as Python's repr writes it (OpenAI's messages come from python-jsonschema); long ones cut. */
export function pyRepr(v: unknown): string {
  const out = repr(v);
  return out.length > 500 ? `${out.slice(0, 500)}...` : out;
}
function repr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') {
    const body = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
    return v.includes("'") && !v.includes('"') ? `"${body}"` : `'${body.replace(/'/g, "\\'")}'`;
  }
  if (Array.isArray(v)) return `[${v.map(repr).join(', ')}]`;
  if (isRecord(v)) return `{${Object.entries(v).map(([k, x]) => `${repr(k)}: ${repr(x)}`).join(', ')}}`;
  return String(v);
}

/** A path as Python prints a tuple of its keys: (), ('items',), ('properties', 'a'). */
const context = (path: readonly string[]) => `In context=(${path.map(repr).join(', ')}${path.length === 1 ? ',' : ''})`;

/**
 * The meta-schema error python-jsonschema's best_match would name, roughly: the shallowest, and at
 * one depth one that is not an anyOf/oneOf summary, an enum rather than a type mismatch.
 */
function bestError(errors: readonly ErrorObject[]): ErrorObject {
  const depth = (e: ErrorObject) => (e.instancePath === '' ? 0 : e.instancePath.split('/').length);
  const rank = (e: ErrorObject) => (e.keyword === 'anyOf' || e.keyword === 'oneOf' ? 2 : e.keyword === 'type' ? 1 : 0);
  return [...errors].sort((a, b) => depth(a) - depth(b) || rank(a) - rank(b))[0];
}

/** One Ajv meta-schema error in python-jsonschema's words. */
function metaMessage(e: ErrorObject): string {
  const data = pyRepr(e.data);
  const p = e.params as Obj;
  switch (e.keyword) {
    case 'type':
      return `${data} is not of type ${String(p.type).split(',').map((t) => `'${t}'`).join(', ')}`;
    case 'enum':
      return `${data} is not one of ${pyRepr(p.allowedValues)}`;
    case 'anyOf':
    case 'oneOf':
      return `${data} is not valid under any of the given schemas`;
    case 'minItems':
      return p.limit === 1 ? `${data} should be non-empty` : `${data} is too short`;
    case 'uniqueItems':
      return `${data} has non-unique elements`;
    case 'minimum':
      return `${data} is less than the minimum of ${String(p.limit)}`;
    default:
      return `${data} is not valid under the meta-schema: ${e.instancePath || '/'} ${e.message ?? ''}`.trimEnd();
  }
}

/** The meta-schema refusal, or undefined: valid under draft 2020-12 or draft-07. */
function metaProblem(schema: Obj): string | undefined {
  const { v2020, v07 } = metaValidators();
  const draft07 = typeof schema.$schema === 'string' && schema.$schema.startsWith(DRAFT_07);
  if (v2020(schema)) return undefined;
  const errors2020 = v2020.errors ?? [];
  if (v07(schema)) return undefined;
  const errors = draft07 ? (v07.errors ?? []) : errors2020;
  return errors.length ? metaMessage(bestError(errors)) : 'is not a valid JSON Schema';
}

const typeIncludes = (s: Obj, t: string) => s.type === t || (Array.isArray(s.type) && s.type.includes(t));

/** The root's type as OpenAI's refusal quotes it: the string, a list in Python's form, None when absent. */
const rootType = (t: unknown) => (typeof t === 'string' ? t : t === undefined ? 'None' : pyRepr(t));

/** The subschemas strict mode's rules reach, with their paths. */
function* children(s: Obj, path: readonly string[]): Generator<[Obj, string[]]> {
  for (const k of ['properties', '$defs', 'definitions']) {
    const m = s[k];
    if (isRecord(m)) for (const [name, sub] of Object.entries(m)) if (isRecord(sub)) yield [sub, [...path, k, name]];
  }
  for (const k of ['items', 'additionalProperties', 'not']) if (isRecord(s[k])) yield [s[k] as Obj, [...path, k]];
  for (const k of ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']) {
    const list = s[k];
    if (Array.isArray(list)) for (const [i, sub] of list.entries()) if (isRecord(sub)) yield [sub, [...path, k, String(i)]];
  }
}

/**
 * Keywords OpenAI's strict mode refuses wherever they stand, "In context=(<path>), '<keyword>' is not
 * permitted.": only those its API was seen refusing lately (2026, Responses and chat alike, code
 * invalid_json_schema or param response_format): `oneOf` (z.discriminatedUnion's output; "In
 * context=(), 'oneOf' is not permitted."), `allOf` ("In context=('properties', 'findings', 'items'),
 * 'allOf' is not permitted.", codex_output_schema) and `if` ("In context=(), 'if' is not permitted.",
 * gpt-5.6-luna, 2026-07). Keywords it refused once and takes now (`format`, `default`: an openai-agents
 * maintainer's probe of api.openai.com, openai/openai-agents-python issue 4390, 2026-08) are not refused.
 */
const NOT_PERMITTED: ReadonlySet<string> = new Set(['oneOf', 'allOf', 'if']);

/** OpenAI's sentence for a `required` that is not exactly the object's properties. */
const REQUIRED_ALL = "'required' is required to be supplied and to be an array including every key in properties.";

/**
 * The first strict-mode rule a schema breaks, depth first, or undefined. `root`: the whole schema, where
 * a local `$ref` must resolve: OpenAI's "In context=('properties', 'children', 'items'), reference to
 * component '#' which was not found in the schema." (openai/openai-node issue 970, 2024, when its
 * strict mode did not yet take `#`) and "reference to component '#/$defs/Inner' which was not found in
 * the schema" (a probe of api.openai.com with `strict: true`, generative-computing/mellea pull request
 * 1493, 2026-08: a resolving `$ref`, recursive or not, is taken).
 */
function strictProblem(s: Obj, path: readonly string[], root: Obj): string | undefined {
  const refused = Object.keys(s).find((k) => NOT_PERMITTED.has(k));
  if (refused !== undefined) return `${context(path)}, '${refused}' is not permitted.`;
  if (typeof s.$ref === 'string' && !refResolves(root, s.$ref)) return `${context(path)}, reference to component ${repr(s.$ref)} which was not found in the schema.`;
  if (typeIncludes(s, 'object') || isRecord(s.properties)) {
    if (s.additionalProperties !== false) return `${context(path)}, 'additionalProperties' is required to be supplied and to be false.`;
    const props = isRecord(s.properties) ? Object.keys(s.properties) : [];
    const required = Array.isArray(s.required) ? s.required : [];
    const missing = props.find((k) => !required.includes(k));
    if (missing !== undefined) return `${context(path)}, ${REQUIRED_ALL} Missing ${repr(missing)}.`;
    // a key required but not among the properties ("Extra required key 'arguments' supplied.", as OpenAI answered pydantic dict fields, 2026)
    const extra = required.find((k) => !props.includes(k as string));
    if (extra !== undefined) return `${context(path)}, ${REQUIRED_ALL} Extra required key ${repr(extra)} supplied.`;
  }
  for (const [sub, at] of children(s, path)) {
    const problem = strictProblem(sub, at, root);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * What a schema is checked as: a function's `parameters` (an object schema always), or a json_schema
 * response format's `schema`, which OpenAI holds to its Structured Outputs rules, the object root
 * included, only in strict mode (without `strict` only the meta-schema check applies: a response
 * format's schema of another root is not known to be refused, and non-OpenAI upstreams take one).
 */
type SchemaUse = 'parameters' | 'response_format';

/** Why OpenAI refuses this schema (the part after "Invalid schema for function 'x': "), or undefined. */
export function parametersProblem(schema: Obj, strict: boolean, use: SchemaUse = 'parameters'): string | undefined {
  const invalid = metaProblem(schema);
  if (invalid) return `${invalid}.`;
  if (strict) return strictModeProblem(schema);
  // a bare {} is a function without parameters; a response format's schema of another root is taken without strict
  if (use === 'response_format' || Object.keys(schema).length === 0) return undefined;
  return schema.type !== 'object' ? rootTypeProblem(schema) : undefined;
}

const rootTypeProblem = (schema: Obj) => `schema must be a JSON Schema of 'type: "object"', got 'type: "${rootType(schema.type)}"'.`;

/** OpenAI's strict-mode rules alone (no meta-schema check), the same for a function's parameters and a response format's schema. */
function strictModeProblem(schema: Obj): string | undefined {
  if (schema.type !== 'object') return rootTypeProblem(schema);
  // OpenAI refuses a root without `properties` even without strict, but Claude, Gemini and the
  // OpenAI-compatible servers take it (MCP tools without parameters send it), so only strict refuses it here
  if (!isRecord(schema.properties)) return `${context([])}, object schema missing properties.`;
  // then OpenAI's size limits (strict-limits.ts)
  return strictProblem(schema, [], schema) ?? strictLimitProblem(schema);
}

/** Verdicts by use, strict flag and schema text ('' when valid); cleared whole when full. */
const verdicts = new Map<string, string>();
const VERDICTS_MAX = 512;
/**
 * A schema's text longer than this is checked every time, not kept: the cache holds at most
 * VERDICTS_MAX x this (16 MB), where schemas of a request body's size each would let a client fill
 * a pod's memory with keys.
 */
export const CACHED_SCHEMA_MAX_CHARS = 32 * 1024;

/** How many verdicts are kept (the tests check that a large schema is not). */
export const cachedVerdicts = (): number => verdicts.size;

function cachedProblem(schema: Obj, strict: boolean, use: SchemaUse): string | undefined {
  return cachedVerdict((strict ? '1' : '0') + use[0], schema, () => parametersProblem(schema, strict, use));
}

/** The verdict kept under `kind` and the schema's text, else `check`'s, kept unless the text is too long. */
function cachedVerdict(kind: string, schema: Obj, check: () => string | undefined): string | undefined {
  const key = kind + JSON.stringify(schema);
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    verdict = check() ?? '';
    if (key.length > CACHED_SCHEMA_MAX_CHARS) return verdict || undefined;
    if (verdicts.size >= VERDICTS_MAX) verdicts.clear();
    verdicts.set(key, verdict);
  }
  return verdict || undefined;
}

/**
 * Whether OpenAI's strict mode takes a schema (its Structured Outputs rules, strictModeProblem; the
 * meta-schema is not checked: a schema it fails is refused with or without strict). For a schema sent
 * strict on a caller's behalf by a dialect whose own strict rules differ (the messages dialect:
 * workers/providers/openai/strict-fallback.ts); cached as the verdicts above.
 */
export const strictModeTakes = (schema: Obj): boolean => cachedVerdict('s', schema, () => strictModeProblem(schema)) === undefined;

/**
 * Where a dialect's function keeps its name, `parameters` and `strict`: chat's `function`, the
 * Responses API's tool itself, a legacy chat `functions` entry itself (OpenAI's deprecated
 * ChatCompletionCreateParams.Function, which has no `strict`: never checked as strict).
 */
const FUNCTION_OF = {
  chat: (tool: Obj) => (isRecord(tool.function) ? tool.function : undefined),
  responses: (tool: Obj) => tool,
  functions: (fn: Obj) => fn,
} as const;
/**
 * Where the parameters sit in an entry of the list: chat's tool `.function.parameters`, the Responses
 * API's `.parameters`, a legacy function's `.parameters` (`functions[N].parameters`: the parameters'
 * place, as a tool's; OpenAI's answer for a legacy function was not found quoted anywhere).
 */
const PARAM_IN = { chat: '.function.parameters', responses: '.parameters', functions: '.parameters' } as const;

/**
 * Refuses the first function tool of `tools` (or function of chat's legacy `functions`: dialect
 * 'functions') whose `parameters` OpenAI refuses (the body is past the dialect's schema). On the
 * Responses API a namespace's member function tools too (OpenAI's NamespaceTool: "The function/custom
 * tools available inside this namespace", openai 7.60.0), named by their own name at
 * `tools[N].tools[M].parameters`: they are offered upstream as the functions they are
 * (offered-tools.ts), and OpenAI checks a function tool's schema wherever it is declared (its refusal
 * of a member was not found quoted: the place and name are the ones its params give a member).
 * `at`: the list's place when it is not the request's `tools` (an input item's, `input[N].tools`).
 */
export function refuseInvalidToolSchemas(tools: unknown, dialect: 'chat' | 'responses' | 'functions', at: string = dialect === 'functions' ? 'functions' : 'tools'): void {
  if (!Array.isArray(tools)) return;
  for (const [i, tool] of tools.entries()) {
    if (!isRecord(tool)) continue;
    if (dialect === 'responses' && tool.type === 'namespace') refuseInvalidToolSchemas(tool.tools, dialect, `${at}[${i}].tools`);
    if (dialect !== 'functions' && tool.type !== 'function') continue;
    const fn = FUNCTION_OF[dialect](tool);
    if (!fn || !isRecord(fn.parameters)) continue;
    const problem = cachedProblem(fn.parameters, dialect !== 'functions' && fn.strict === true, 'parameters');
    if (problem) throw new ApiError(400, 'invalid_function_parameters', `Invalid schema for function '${String(fn.name)}': ${problem}`, { param: `${at}[${i}]${PARAM_IN[dialect]}` });
  }
}

/**
 * A json_schema response format whose `schema` OpenAI refuses, refused as it refuses it: 400
 * invalid_request_error, "Invalid schema for response_format '<name>': <why>" (the same reasons as a
 * function's), `param` `response_format` on chat completions (its bodies as quoted in
 * dottxt-ai/outlines issues 844 and 1254, ag2ai/ag2 issue 1990, moeru-ai/xsai issue 202), code
 * `invalid_json_schema`: OpenAI's code for it on the Responses API, whose `param` is
 * `text.format.schema` (mavam/pi-web-providers issue 14 quotes the body); chat's own answer carries
 * code null, which the gateway's envelope, always with a string code, cannot. `format`: chat's
 * `response_format` ({type, json_schema: {name, schema, strict}}) or the Responses API's `text.format`
 * ({type, name, schema, strict}). The strict rules only with `strict: true` sent (chat's default is false).
 * `param`: where the schema sits when not at the dialect's own place (a Responses `configuration_update`
 * item's format: `input[N].text.format.schema`, api/routes/responses/request-schemas.ts).
 */
export function refuseInvalidResponseSchema(format: unknown, dialect: 'chat' | 'responses', param: string = dialect === 'chat' ? 'response_format' : 'text.format.schema'): void {
  if (!isRecord(format) || format.type !== 'json_schema') return;
  const spec = dialect === 'chat' ? format.json_schema : format;
  if (!isRecord(spec) || !isRecord(spec.schema)) return;
  const problem = cachedProblem(spec.schema, spec.strict === true, 'response_format');
  if (problem) throw new ApiError(400, 'invalid_json_schema', `Invalid schema for response_format '${String(spec.name)}': ${problem}`, { param });
}
