/**
 * Strict schemas an OpenAI upstream's strict mode would refuse, sent without it. The messages
 * dialect asks for strict tools (`strict: true`) and JSON outputs (`output_config.format`) under
 * Anthropic's structured-output rules (api/routes/messages/strict-schemas.ts), and sends them on as
 * strict function tools and a strict `response_format` (api/dialects/messages/request.ts). Anthropic
 * takes schemas OpenAI's strict mode refuses, above all optional properties (Anthropic: a property
 * left out of `required` may be left out; OpenAI: "'required' is required to be supplied and to be
 * an array including every key in properties", shared/json-schema/tool-schemas.ts), and also a closed object
 * without `properties` and `allOf`. Sent strict, such a request valid for Anthropic was refused by
 * the upstream in OpenAI's words.
 *
 * Such a tool or format goes with `strict: false` (chat completions' default): the model gets the
 * schema as the client wrote it, optional properties included, but its output is not constrained to
 * it. The other way, rewriting each optional property as required and nullable (OpenAI's own advice
 * for optional fields) and taking the model's nulls out of its answer, would keep the constraint but
 * change what the model is asked for and needs every answer path (JSON, a stream's partial tool
 * input, a batch line) to hold back and rewrite the output: a null cannot be told apart from "left
 * out" while it streams, and one the schema itself allows would be lost. Strict tools and formats whose
 * schema strict mode takes stay strict. Only here, at the OpenAI-compatible upstream: an Anthropic
 * deployment of a mixed pool and Bedrock's Converse get them strict, as their rules are Anthropic's.
 *
 * A chat-completions or Responses client's own strict schemas never get here refused: their routes
 * refuse them first, in OpenAI's words (shared/json-schema/tool-schemas.ts). Nothing is done, nor copied, for
 * a body without a strict tool or format; a schema's verdict is cached (strictModeTakes).
 */
import { isRecord } from '../../../shared/is-record';
import { strictModeTakes } from '../../../shared/json-schema/tool-schemas';
import { withJsonKey } from '../../../shared/merged';

type Obj = Record<string, unknown>;

/** The function (chat's `tool.function`, a format's `json_schema`) with `strict: false` if it is strict on a schema strict mode refuses, else undefined. */
function relaxed(fn: unknown, schemaKey: 'parameters' | 'schema'): Obj | undefined {
  if (!isRecord(fn) || fn.strict !== true || !isRecord(fn[schemaKey]) || strictModeTakes(fn[schemaKey] as Obj)) return undefined;
  return withJsonKey(fn, 'strict', false);
}

/** The body with `strict: false` on each strict function tool and strict json_schema format whose schema OpenAI's strict mode refuses; the body itself when none. */
export function strictWhereTaken(body: Obj): Obj {
  let out = body;
  const tools = body.tools;
  if (Array.isArray(tools) && tools.some((t) => isRecord(t) && isRecord(t.function) && t.function.strict === true)) {
    let changed = false;
    const sent = tools.map((t) => {
      const fn = isRecord(t) && t.type === 'function' ? relaxed(t.function, 'parameters') : undefined;
      if (!fn) return t;
      changed = true;
      return withJsonKey(t as Obj, 'function', fn);
    });
    if (changed) out = withJsonKey(out, 'tools', sent);
  }
  const format = body.response_format;
  const spec = isRecord(format) && format.type === 'json_schema' ? relaxed(format.json_schema, 'schema') : undefined;
  if (spec) out = withJsonKey(out, 'response_format', withJsonKey(format as Obj, 'json_schema', spec));
  return out;
}
