/**
 * Schemas Anthropic's structured outputs refuse, refused as it refuses them, on every upstream (400
 * `invalid_request_error`, before any lane, upstream call or bill): a strict custom tool's
 * `input_schema` (`strict: true`) and the JSON output schema (`output_config.format.schema`, or the
 * beta's deprecated `output_format.schema`). Before, an Anthropic-native upstream was sent such a
 * schema to refuse after a lane was taken, while a translated one served it (Gemini, Bedrock) or
 * refused it in its own words (an OpenAI upstream's strict mode).
 *
 * Anthropic's rules: its Structured Outputs document (platform.claude.com/docs/en/build-with-claude/
 * structured-outputs, "JSON Schema limitations" and "Schema complexity limits": "Both JSON outputs and
 * strict tool use share these limitations", "If you use an unsupported feature, you'll receive a 400
 * error"). Only the rules its API was seen refusing, in the words its 400 bodies are quoted with
 * (prefix `tools.N.custom: ` for a tool, N its index in `tools`, `output_config.format.schema: ` for
 * the output schema), are enforced:
 * - definitions that reference themselves, directly or through others: "Circular reference detected in
 *   schema definitions: __schema0 -> __schema0. Self-referencing or mutually-referencing definitions
 *   are not supported." (a live probe's `output_format.schema` answer, egonSchiele/agency-lang issue
 *   487; others quote it for zod's `z.lazy` and for strict tools), the first cycle of `$defs` (or
 *   `definitions`) in their order;
 * - `oneOf` anywhere: "Schema type 'oneOf' is not supported" (live probes of strict tools and output
 *   schemas quote it, Bedrock's too; `anyOf` is taken, and the SDK's transform turns `oneOf` into it);
 * - a subschema without `type` (nor `$ref`, `anyOf`, `allOf`, `enum` or `const`, which
 *   stand for one): "Invalid schema: Schema type is missing for schema: {'default': None, 'title':
 *   'Value'}", the subschema in Python's repr (quoted for a strict tool's nested property and for an
 *   output schema; the SDK's transform and Claude Code's strict schemas require a type likewise);
 * - an object schema whose `additionalProperties` is not `false`: absent, "For 'object' type,
 *   'additionalProperties' must be explicitly set to false" (quoted by many clients, both prefixes);
 *   `true` or a schema, "For 'object' type, 'additionalProperties: true' is not supported. Please set
 *   'additionalProperties' to false" (`: object` for a schema; both quoted from live probes);
 * - numeric bounds on a `number` or `integer`: "For 'integer' type, property 'minimum' is not
 *   supported", several at once "For 'number' type, properties maximum, minimum are not supported"
 *   (quoted for `minimum`, `maximum` and `exclusiveMinimum`; the document names `multipleOf`;
 *   `exclusiveMaximum` is `exclusiveMinimum`'s twin);
 * - an array's `minItems` above 1, "For 'array' type, 'minItems' values other than 0 or 1 are not
 *   supported", and its `maxItems`, "For 'array' type, property 'maxItems' is not supported".
 * The document's string constraints (`minLength`, `maxLength`) are not refused: live probes found
 * them taken (and Claude Code's TodoWrite sends `minLength`).
 * The explicit limits (document's table; words as its 400 bodies are quoted, no prefix): more than
 * 20 strict tools ("Too many strict tools (22). The maximum number of strict tools supported is 20.
 * Try reducing the number of tools marked as strict."), more than 16 parameters (properties) with
 * `anyOf` or a type list across the strict schemas, then more than 24 optional ones (not in their
 * object's `required`); Anthropic answers the union count before the optional one (clients quote
 * the two in that order). Counted as written (`$defs` once each), which counts no more than
 * Anthropic, which expands references, as long as every definition is used. count_tokens checks the
 * schemas (a client found Anthropic's count refuse a strict tool's `minItems` above 1) but not the
 * limits: the document counts tokens "without compilation", which the limits guard.
 */
import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';
import { pyRepr } from '../../../shared/json-schema/tool-schemas';

type Obj = Record<string, unknown>;

const NUMERIC_BOUNDS = ['exclusiveMaximum', 'exclusiveMinimum', 'maximum', 'minimum', 'multipleOf'];
const LIMITS = { strictTools: 20, unions: 16, optional: 24 };

/** Keywords that stand for a `type` (the SDK's transformJSONSchema and Claude Code's strict check take them so). */
const TYPED_BY = ['type', '$ref', 'anyOf', 'allOf', 'enum', 'const'];

const typesOf = (s: Obj): string[] => (typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? s.type.filter((t): t is string => typeof t === 'string') : []);

/** Anthropic's sentence for keywords a type does not support (several listed sorted, unquoted). */
const notSupported = (type: string, keys: readonly string[]) =>
  keys.length === 1 ? `For '${type}' type, property '${keys[0]}' is not supported` : `For '${type}' type, properties ${[...keys].sort().join(', ')} are not supported`;

/** Why Anthropic refuses this one subschema (its own keywords only), or undefined. */
function nodeProblem(s: Obj): string | undefined {
  if ('oneOf' in s) return "Schema type 'oneOf' is not supported";
  if (!TYPED_BY.some((k) => k in s)) return `Invalid schema: Schema type is missing for schema: ${pyRepr(s)}`;
  const types = typesOf(s);
  if (types.includes('object')) {
    const extra = s.additionalProperties;
    if (extra === undefined) return "For 'object' type, 'additionalProperties' must be explicitly set to false";
    if (extra === true || isRecord(extra)) return `For 'object' type, 'additionalProperties: ${extra === true ? 'true' : 'object'}' is not supported. Please set 'additionalProperties' to false`;
  }
  for (const type of types) {
    if (type === 'number' || type === 'integer') {
      const bounds = NUMERIC_BOUNDS.filter((k) => k in s);
      if (bounds.length) return notSupported(type, bounds);
    }
    if (type === 'array') {
      if (typeof s.minItems === 'number' && s.minItems > 1) return "For 'array' type, 'minItems' values other than 0 or 1 are not supported";
      if ('maxItems' in s) return notSupported('array', ['maxItems']);
    }
  }
  return undefined;
}

/** Every subschema below `s`, in document order. */
function* subschemas(s: Obj): Generator<Obj> {
  for (const k of ['properties', '$defs', 'definitions', 'patternProperties']) {
    const m = s[k];
    if (isRecord(m)) for (const sub of Object.values(m)) if (isRecord(sub)) yield sub;
  }
  for (const k of ['items', 'additionalProperties', 'not', 'contains']) if (isRecord(s[k])) yield s[k] as Obj;
  for (const k of ['items', 'prefixItems', 'anyOf', 'oneOf', 'allOf']) {
    const list = s[k];
    if (Array.isArray(list)) for (const sub of list) if (isRecord(sub)) yield sub;
  }
}

/** The local `$ref` targets under `v` that name an entry of the definitions at `prefix` (`#/$defs/`). */
function refsTo(v: unknown, prefix: string, into: Set<string>): Set<string> {
  if (Array.isArray(v)) for (const x of v) refsTo(x, prefix, into);
  else if (isRecord(v)) {
    if (typeof v.$ref === 'string' && v.$ref.startsWith(prefix)) into.add(v.$ref.slice(prefix.length).replace(/~1/g, '/').replace(/~0/g, '~'));
    for (const x of Object.values(v)) refsTo(x, prefix, into);
  }
  return into;
}

/** The first cycle among the root's definitions, as Anthropic names it (`a -> b -> a`), or undefined. */
function definitionCycle(root: Obj): string[] | undefined {
  for (const key of ['$defs', 'definitions']) {
    const defs = root[key];
    if (!isRecord(defs)) continue;
    const edges = new Map(Object.entries(defs).map(([name, def]) => [name, [...refsTo(def, `#/${key}/`, new Set())].filter((to) => to in defs)]));
    const done = new Set<string>();
    const visit = (name: string, path: string[]): string[] | undefined => {
      const at = path.indexOf(name);
      if (at >= 0) return [...path.slice(at), name];
      if (done.has(name)) return undefined;
      for (const to of edges.get(name) ?? []) {
        const cycle = visit(to, [...path, name]);
        if (cycle) return cycle;
      }
      done.add(name);
      return undefined;
    };
    for (const name of edges.keys()) {
      const cycle = visit(name, []);
      if (cycle) return cycle;
    }
  }
  return undefined;
}

/** The first rule the schema breaks (its definitions' cycles, then its subschemas depth first), or undefined. */
function schemaProblem(s: Obj): string | undefined {
  const cycle = definitionCycle(s);
  if (cycle) return `Circular reference detected in schema definitions: ${cycle.join(' -> ')}. Self-referencing or mutually-referencing definitions are not supported.`;
  return subschemaProblem(s);
}

/** The first rule a subschema breaks, depth first, or undefined. */
function subschemaProblem(s: Obj): string | undefined {
  const own = nodeProblem(s);
  if (own) return own;
  for (const sub of subschemas(s)) {
    const problem = subschemaProblem(sub);
    if (problem) return problem;
  }
  return undefined;
}

/** The union-typed and the optional parameters (properties) of a schema, nested ones included. */
function countParameters(s: Obj, into: { unions: number; optional: number }): void {
  if (isRecord(s.properties)) {
    const required = Array.isArray(s.required) ? s.required : [];
    for (const [name, prop] of Object.entries(s.properties)) {
      if (!required.includes(name)) into.optional++;
      if (isRecord(prop) && (Array.isArray(prop.anyOf) || (Array.isArray(prop.type) && prop.type.length > 1))) into.unions++;
    }
  }
  for (const sub of subschemas(s)) countParameters(sub, into);
}

type StrictBody = {
  tools?: unknown;
  output_config?: { format?: { type?: string; schema?: unknown } | null } | null;
  output_format?: { type?: string; schema?: unknown } | null;
};

/** The strict schemas of a request with the place Anthropic's refusal names: strict custom tools, then the output schema. */
function strictSchemas(body: StrictBody): { tools: number; schemas: Array<[string, Obj]> } {
  const schemas: Array<[string, Obj]> = [];
  let tools = 0;
  if (Array.isArray(body.tools)) {
    for (const [i, tool] of body.tools.entries()) {
      if (!isRecord(tool) || tool.strict !== true || !(tool.type === undefined || tool.type === 'custom')) continue;
      tools++;
      if (isRecord(tool.input_schema)) schemas.push([`tools.${i}.custom`, tool.input_schema]);
    }
  }
  const [at, format] = body.output_config?.format ? ['output_config.format.schema', body.output_config.format] : ['output_format.schema', body.output_format];
  if (format?.type === 'json_schema' && isRecord(format.schema)) schemas.push([at, format.schema]);
  return { tools, schemas };
}

/**
 * Refuses a request whose strict tools or output schema Anthropic's structured outputs refuse (the
 * body is past the messages schema and the input_schema check): the strict tool count, each schema's
 * first unsupported feature, then the union and optional parameter counts. `limits: false` (count_tokens)
 * checks the schemas only.
 */
export function refuseUnsupportedStrictSchemas(body: StrictBody, opts: { limits: boolean }): void {
  const { tools, schemas } = strictSchemas(body);
  const refuse = (message: string) => {
    throw new ApiError(400, 'invalid_request', message);
  };
  if (opts.limits && tools > LIMITS.strictTools) {
    refuse(`Too many strict tools (${tools}). The maximum number of strict tools supported is ${LIMITS.strictTools}. Try reducing the number of tools marked as strict.`);
  }
  for (const [at, schema] of schemas) {
    const problem = schemaProblem(schema);
    if (problem) refuse(`${at}: ${problem}`);
  }
  if (!opts.limits) return;
  const counts = { unions: 0, optional: 0 };
  for (const [, schema] of schemas) countParameters(schema, counts);
  if (counts.unions > LIMITS.unions) {
    refuse(
      `Schemas contains too many parameters with union types (${counts.unions} parameters with type arrays or anyOf). This causes exponential compilation cost. Reduce the number of nullable or union-typed parameters (limit: ${LIMITS.unions} parameters with unions).`,
    );
  }
  if (counts.optional > LIMITS.optional) {
    refuse(`Schemas contains too many optional parameters (${counts.optional}), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: ${LIMITS.optional}).`);
  }
}
