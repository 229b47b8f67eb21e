import { assertParsedDepth } from '../http/json-checks';

/** OpenAI's batch input: one `{custom_id, method: "POST", url, body}` object per line. */
export interface InputLine {
  custom_id: string;
  body: Record<string, unknown>;
}

export interface InputError {
  code: string;
  message: string;
  line: number | null;
  param: string | null;
}

/** The non-empty lines of a JSONL file, each with its line number in the file (from 1; blank lines count). */
export function jsonlLines(bytes: Buffer): { line: number; text: string }[] {
  return bytes
    .toString('utf8')
    .split('\n')
    .map((l, i) => ({ line: i + 1, text: l.trim() }))
    .filter((l) => l.text.length > 0);
}

/**
 * A failed batch's `errors.data` lists the first this many bad lines, then (when there are more)
 * one `too_many_errors` entry with their count: a file of 50,000 bad lines must not write 50,000
 * entries into the batch row and into every answer that shows it (docs/batches.md).
 */
export const MAX_LISTED_ERRORS = 100;

/** The entry after the first MAX_LISTED_ERRORS (migration 0037 writes the same text into older rows). */
export function tooManyErrors(count: number): InputError {
  return { code: 'too_many_errors', message: `${count} lines of the input file are invalid; the first ${MAX_LISTED_ERRORS} are listed.`, line: null, param: null };
}

/** A custom_id quoted in a message, cut to 64 characters (the line number names the line). */
const quoted = (id: string): string => (id.length > 64 ? `${id.slice(0, 64)}…` : id);

/**
 * Parses and checks an input file against the batch's endpoint. Any invalid line fails the whole
 * batch, with one error per line (its line number in the file, from 1, blank lines counted), as
 * OpenAI's validation does: the first MAX_LISTED_ERRORS of them, then their count.
 */
export function parseInput(bytes: Buffer, endpoint: string): { lines: InputLine[]; errors: InputError[] } {
  const lines: InputLine[] = [];
  const listed: InputError[] = [];
  let bad = 0;
  const fail = (e: InputError): void => {
    if (bad++ < MAX_LISTED_ERRORS) listed.push(e);
  };
  const seen = new Set<string>();
  const raw = jsonlLines(bytes);
  if (!raw.length) fail({ code: 'empty_file', message: 'The input file has no requests.', line: null, param: null });
  raw.forEach(({ line, text }) => {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      fail({ code: 'invalid_json_line', message: `Line ${line} is not valid JSON.`, line, param: null });
      return;
    }
    const o = v as Record<string, unknown>;
    if (!o || typeof o !== 'object' || Array.isArray(o)) return void fail({ code: 'invalid_request', message: `Line ${line} is not a JSON object.`, line, param: null });
    if (typeof o.custom_id !== 'string' || !o.custom_id || o.custom_id.length > 512) return void fail({ code: 'missing_required_parameter', message: `Line ${line}: \`custom_id\` must be a non-empty string of at most 512 characters.`, line, param: 'custom_id' });
    if (seen.has(o.custom_id)) return void fail({ code: 'duplicate_custom_id', message: `Line ${line}: the custom_id '${quoted(o.custom_id)}' is used by an earlier line.`, line, param: 'custom_id' });
    seen.add(o.custom_id);
    if (o.method !== 'POST') return void fail({ code: 'invalid_method', message: `Line ${line}: \`method\` must be "POST".`, line, param: 'method' });
    if (o.url !== endpoint) return void fail({ code: 'mismatched_url', message: `Line ${line}: \`url\` must be the batch's endpoint, ${endpoint}.`, line, param: 'url' });
    if (!o.body || typeof o.body !== 'object' || Array.isArray(o.body)) return void fail({ code: 'invalid_request', message: `Line ${line}: \`body\` must be a JSON object.`, line, param: 'body' });
    // nested deeper than a request body may be (the line's own request would be refused): storing it would overflow the stack
    try {
      assertParsedDepth(o.body);
    } catch (e) {
      return void fail({ code: 'invalid_request', message: `Line ${line}: ${(e as Error).message.replace('The request body', '`body`')}`, line, param: 'body' });
    }
    lines.push({ custom_id: o.custom_id, body: o.body as Record<string, unknown> });
  });
  return { lines, errors: bad > MAX_LISTED_ERRORS ? [...listed, tooManyErrors(bad)] : listed };
}

/**
 * OpenAI's `Batch.model`: the model every line's body names. OpenAI's batch guide takes one model per
 * input file; the gateway runs a file that names several, and then answers null, as it does for a
 * name of more than 255 characters (the column's size; no line naming it would run).
 */
export function batchModel(lines: InputLine[]): string | null {
  const names = new Set(lines.map((l) => l.body.model));
  const [only] = names;
  return names.size === 1 && typeof only === 'string' && only.length > 0 && only.length <= 255 ? only : null;
}
