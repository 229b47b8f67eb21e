import type Joi from 'joi';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type JsonSchema = Record<string, any>;

function regexSource(r: string): string {
  const m = /^\/(.*)\/[a-z]*$/s.exec(r);
  return m ? m[1] : r;
}

function rulesOf(d: any): Array<{ name: string; args?: any }> {
  return d.rules ?? [];
}

/** Converts the `describe()` output of the Joi subset this API uses into JSON Schema (OpenAPI 3.1). */
function convert(d: any): JsonSchema {
  const out: JsonSchema = {};
  const flags = d.flags ?? {};
  switch (d.type) {
    case 'object': {
      out.type = 'object';
      if (d.keys) {
        out.properties = {};
        const required: string[] = [];
        for (const [k, v] of Object.entries<any>(d.keys)) {
          out.properties[k] = convert(v);
          if (v.flags?.presence === 'required') required.push(k);
        }
        if (required.length) out.required = required;
        out.additionalProperties = !!flags.unknown;
      }
      if (d.patterns?.length) out.additionalProperties = d.patterns[0].rule ? convert(d.patterns[0].rule) : true;
      for (const r of rulesOf(d)) if (r.name === 'min') out.minProperties = r.args.limit;
      break;
    }
    case 'string':
      out.type = 'string';
      for (const r of rulesOf(d)) {
        if (r.name === 'min') out.minLength = r.args.limit;
        else if (r.name === 'max') out.maxLength = r.args.limit;
        else if (r.name === 'pattern') out.pattern = regexSource(String(r.args.regex));
        else if (r.name === 'uri') out.format = 'uri';
        else if (r.name === 'guid') out.format = 'uuid';
        else if (r.name === 'email') out.format = 'email';
      }
      break;
    case 'number':
      out.type = 'number';
      for (const r of rulesOf(d)) {
        if (r.name === 'integer') out.type = 'integer';
        else if (r.name === 'min') out.minimum = r.args.limit;
        else if (r.name === 'max') out.maximum = r.args.limit;
        else if (r.name === 'greater') out.exclusiveMinimum = r.args.limit;
      }
      break;
    case 'boolean':
      out.type = 'boolean';
      break;
    case 'date':
      out.type = 'string';
      out.format = 'date-time';
      break;
    case 'array':
      out.type = 'array';
      if (d.items?.length) out.items = d.items.length === 1 ? convert(d.items[0]) : { anyOf: d.items.map(convert) };
      for (const r of rulesOf(d)) {
        if (r.name === 'min') out.minItems = r.args.limit;
        else if (r.name === 'max') out.maxItems = r.args.limit;
        else if (r.name === 'unique') out.uniqueItems = true;
      }
      break;
    case 'alternatives':
      out.anyOf = (d.matches ?? []).map((m: any) => convert(m.schema));
      break;
    default:
      break;
  }
  const allow: unknown[] = d.allow ?? [];
  if (flags.only && allow.length) out.enum = allow;
  else if (allow.includes(null) && out.type) out.type = [out.type, 'null'];
  if (flags.description) out.description = flags.description;
  if (flags.default !== undefined && typeof flags.default !== 'function') out.default = flags.default;
  return out;
}

export function joiToJson(schema: Joi.Schema): JsonSchema {
  return convert(schema.describe());
}
