import { ApiError } from '../errors/ApiError';

/** Deepest nesting of objects and arrays a JSON body may have. */
export const MAX_JSON_DEPTH = 128;

const tooDeep = (code: string) => new ApiError(400, code, `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJ = 0x7b;
const OPEN_ARR = 0x5b;
const CLOSE_OBJ = 0x7d;
const CLOSE_ARR = 0x5d;

const LOWER_U = 0x75;
/** The two bytes of a `\u` escape (or of an escaped backslash before a `u`: counted too, which only costs a walk). */
const ESCAPE_U = Buffer.from('\\u', 'latin1');

/** Whether the bytes hold more than `limit` opening brackets, in strings or not: counted natively (memchr). */
function openingsOver(raw: Buffer, limit: number): boolean {
  let n = 0;
  for (const b of [OPEN_OBJ, OPEN_ARR]) {
    for (let i = raw.indexOf(b); i !== -1; i = raw.indexOf(b, i + 1)) if (++n > limit) return true;
  }
  return false;
}

/**
 * Refuses (400) raw JSON nested deeper than MAX_JSON_DEPTH, before it is parsed. Bytes with at most
 * that many opening brackets cannot nest deeper, and are counted natively; others get one pass over
 * the bytes, outside strings. Deeply nested input would otherwise overflow the stack of whatever
 * walks it. Returns whether the bytes may hold text Postgres cannot store once parsed
 * (`mayBeUnstorable`): in UTF-8 JSON a NUL character or a lone surrogate can only come from a `\u`
 * escape (raw control characters are not JSON, and invalid UTF-8 decodes to U+FFFD), so without one
 * (and without a NUL byte) the parsed body needs no `assertStorableText` walk.
 */
export function assertJsonDepth(raw: Buffer, code = 'invalid_request'): { mayBeUnstorable: boolean } {
  if (!openingsOver(raw, MAX_JSON_DEPTH)) return { mayBeUnstorable: raw.indexOf(ESCAPE_U) !== -1 || raw.indexOf(0) !== -1 };
  let depth = 0;
  let inString = false;
  let escapes = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (inString) {
      if (b === BACKSLASH) {
        if (raw[i + 1] === LOWER_U) escapes = true;
        i++;
      } else if (b === QUOTE) inString = false;
      else if (b === 0) escapes = true;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_OBJ || b === OPEN_ARR) {
      if (++depth > MAX_JSON_DEPTH) throw tooDeep(code);
    } else if (b === CLOSE_OBJ || b === CLOSE_ARR) depth--;
    else if (b === 0) escapes = true;
  }
  return { mayBeUnstorable: escapes };
}

/**
 * Refuses (400) a parsed value nested deeper than MAX_JSON_DEPTH, iteratively. For a body whose raw
 * bytes assertJsonDepth cannot read: one in a charset other than UTF-8 (UTF-16 or UTF-32, where a
 * bracket or quote is not one byte, and a byte 0x22 or 0x5b may be half of another character).
 */
export function assertParsedDepth(body: unknown, code = 'invalid_request'): void {
  const stack: Array<[object, number]> = body && typeof body === 'object' ? [[body, 1]] : [];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) throw tooDeep(code);
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x && typeof x === 'object') stack.push([x, depth + 1]);
  }
}

/** `String.prototype.isWellFormed` (Node 20; not yet in the compiler's lib): no lone surrogate. */
type WellFormed = { isWellFormed(): boolean };

/** A string Postgres can store as text: no NUL, no lone UTF-16 surrogate. */
export function storable(s: string): boolean {
  return !s.includes('\u0000') && (s as unknown as WellFormed).isWellFormed();
}

/**
 * Refuses (400) a parsed body holding a string (value or key) Postgres cannot store as text: a NUL
 * character or a lone surrogate. Checked before anything is dispatched, so nothing goes upstream
 * and nothing is billed. Iterative: depth is already bounded, but no recursion is needed.
 */
export function assertStorableText(body: unknown, code = 'invalid_request'): void {
  const stack: unknown[] = [body];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!storable(v)) throw new ApiError(400, code, 'The request body contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored.');
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x); // not push(...v): a huge array would overflow the argument stack
    }
    else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        stack.push(k);
        stack.push(child);
      }
    }
  }
}

/** `String.prototype.toWellFormed` (Node 20): lone surrogates become U+FFFD. */
type ToWellFormed = { toWellFormed(): string };

/**
 * A copy of `value` that Postgres can store: NUL and lone surrogates in every string (values and
 * keys) replaced by U+FFFD. For text the gateway did not choose to refuse, e.g. an upstream's answer.
 */
export function storableCopy<T>(value: T): T {
  const clean = (s: string) => (s as unknown as ToWellFormed).toWellFormed().replace(/\u0000/g, '\ufffd');
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'string') return clean(v);
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[clean(k)] = x; // keys too; values are cleaned when visited
      return out;
    }
    return v;
  });
  return JSON.parse(text) as T;
}
