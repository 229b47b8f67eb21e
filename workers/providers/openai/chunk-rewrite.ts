/**
 * A streamed chat (or legacy completions) chunk of an OpenAI-compatible upstream passed on with only
 * its `model` changed to the public id, without parsing and re-serialising it (issue 29: a streamed
 * chat is about 18 events, each parsed and serialised again by the worker; docs/benchmark.md).
 *
 * Only the plain content chunk takes this way: an object whose top-level `model` comes before any
 * nested object or array, with no `error` and no usage other than `"usage":null` (OpenAI sends that
 * on every chunk but the last when usage is asked for, and the gateway always asks). A null usage is
 * kept when the caller asked for usage and removed when not, as the full path does. Anything else
 * (a usage chunk, an in-band error, a chunk of another shape) returns undefined and takes the full
 * path in chatComplete. The chunk keeps the upstream's own formatting (spacing, key order, escapes):
 * the same JSON value the full path would send.
 */
const MODEL = /"model"\s*:\s*"(?:[^"\\]|\\.)*"/;
/** A null usage as the last key (top level: the object's own closing brace follows) or before any nesting. */
const NULL_USAGE_LAST = /,\s*"usage"\s*:\s*null\s*(?=}$)/;
const NULL_USAGE = /,\s*"usage"\s*:\s*null\s*(?=,)/;

/** `modelField`: `"model":` and the public id as a JSON string (computed once per stream). */
export function rewriteChunk(data: string, modelField: string, includeUsage: boolean): string | undefined {
  if (data.charCodeAt(0) !== 0x7b || data.charCodeAt(data.length - 1) !== 0x7d) return undefined;
  // A quote inside a JSON string is always escaped, so `"error"` and `"usage"` match keys (or whole
  // string values, which only send the chunk the full way).
  if (data.includes('"error"')) return undefined;
  const m = MODEL.exec(data);
  // the top-level key: no object or array opens before it
  if (!m || data.lastIndexOf('{', m.index) !== 0 || data.lastIndexOf('[', m.index) !== -1) return undefined;
  let out = data.slice(0, m.index) + modelField + data.slice(m.index + m[0].length);
  const u = out.indexOf('"usage"');
  if (u >= 0) {
    if (out.indexOf('"usage"', u + 7) >= 0) return undefined;
    let n = NULL_USAGE_LAST.exec(out);
    if (!n) {
      n = NULL_USAGE.exec(out);
      if (n && (out.lastIndexOf('{', n.index) !== 0 || out.lastIndexOf('[', n.index) !== -1)) n = null;
    }
    if (!n || n.index + n[0].indexOf('"usage"') !== u) return undefined; // a usage that is not null, or not at the top
    if (!includeUsage) out = out.slice(0, n.index) + out.slice(n.index + n[0].length);
  }
  return out;
}
