import type Joi from 'joi';
import { ApiError } from '../shared/errors/ApiError';

/**
 * `JSON.parse` makes `"__proto__"` an own key, and Joi skips own `__proto__` keys: a value under
 * one (a question id, a metadata key, a choice option) would pass unchecked and reach the handler.
 * Such keys are validated under this stand-in name and reported under their own.
 */
const PROTO = '__proto__';
const STAND_IN = '\u0000__proto__';

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Whether any object in the value has an own `__proto__` key. */
export function hasProtoKey(v: unknown): boolean {
  if (!v || typeof v !== 'object') return false;
  if (Array.isArray(v)) {
    for (const x of v) if (hasProtoKey(x)) return true;
    return false;
  }
  if (hasOwn(v, PROTO)) return true;
  for (const k in v) if (hasProtoKey((v as Record<string, unknown>)[k])) return true;
  return false;
}

/** A copy of the value with every own `__proto__` key renamed to the stand-in. */
function protoKeysRenamed(v: unknown): unknown {
  if (!v || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(protoKeysRenamed);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = Object.getOwnPropertyDescriptor(v, k)!.value as unknown;
    Object.defineProperty(out, k === PROTO ? STAND_IN : k, { value: protoKeysRenamed(x), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A Joi path as the message names it: `messages[1].role`. */
export function paramOf(path: Array<string | number> | undefined): string | undefined {
  if (!path?.length) return undefined;
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p === STAND_IN ? PROTO : p}`)).join('');
}

/**
 * The first problem as a 400: the given code, unless the rule that failed names its own in its
 * error's context (`helpers.error(type, { errorCode })`: OpenAI's `array_above_max_length`, say).
 * The param is the path's, unless the rule names its own the same way (`{ param }`).
 */
function refusal(error: Joi.ValidationError, code: string, words?: Words, schema?: Joi.Schema): ApiError {
  const detail = error.details[0];
  const message = detail?.message.replace(/"/g, "'").split(STAND_IN).join(PROTO) ?? 'Invalid request.';
  const own = detail?.context?.errorCode;
  const worded = words && detail && typeof own !== 'string' ? words(detail, schema!) : undefined;
  if (worded) return worded;
  // a rule may name its param as its vendor does (`helpers.error(type, { param })`: OpenAI's `messages.[3].role`)
  const param = detail?.context?.param;
  return new ApiError(400, typeof own === 'string' ? own : code, message, { param: typeof param === 'string' ? param : paramOf(detail?.path) });
}

/** A dialect's own words for a Joi problem (api/routes/openai-words.ts: OpenAI's), or undefined to answer it as `validate` does. */
export type Words = (detail: Joi.ValidationErrorItem, schema: Joi.Schema) => ApiError | undefined;

/**
 * Validates with a Joi schema; the first problem becomes a 400 with the given code. `convert` lets
 * Joi turn strings into the schema's types (query strings, multipart fields); JSON is taken as typed.
 * `words`: the dialect's refusal of a problem, where it has one (a rule's own `errorCode` still wins).
 */
export function validate<T>(schema: Joi.Schema, value: unknown, code = 'invalid_request', convert = false, words?: Words): T {
  const opts = { abortEarly: true, convert };
  if (hasProtoKey(value)) {
    const { error } = schema.validate(protoKeysRenamed(value), opts);
    if (error) throw refusal(error, code, words, schema);
  }
  const { error, value: out } = schema.validate(value, opts);
  if (error) throw refusal(error, code, words, schema);
  return out as T;
}

/** Validates a query string (its values arrive as strings, so they are converted); the first problem is a 400 `invalid_request`. */
export function validateQuery<T>(schema: Joi.Schema, query: unknown): T {
  return validate<T>(schema, query, 'invalid_request', true);
}

/**
 * OpenAI's refusal of a body field an endpoint does not take ("Unrecognized request argument
 * supplied: x."), naming it; `hint` follows the sentence. An ignored field would be lost silently.
 */
export function refuseUnknownFields(body: Record<string, unknown>, allowed: readonly string[], hint = ''): void {
  const extra = Object.keys(body).find((k) => !allowed.includes(k));
  if (extra !== undefined) throw new ApiError(400, 'invalid_request', `Unrecognized request argument supplied: ${extra}.${hint}`, { param: extra });
}
