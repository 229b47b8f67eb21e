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
 * Parses and checks an input file against the batch's endpoint. Any invalid line fails the whole
 * batch, with one error per line (its line number in the file, from 1, blank lines counted), as
 * OpenAI's validation does.
 */
export function parseInput(bytes: Buffer, endpoint: string): { lines: InputLine[]; errors: InputError[] } {
  const lines: InputLine[] = [];
  const errors: InputError[] = [];
  const seen = new Set<string>();
  const raw = jsonlLines(bytes);
  if (!raw.length) errors.push({ code: 'empty_file', message: 'The input file has no requests.', line: null, param: null });
  raw.forEach(({ line, text }) => {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      errors.push({ code: 'invalid_json_line', message: `Line ${line} is not valid JSON.`, line, param: null });
      return;
    }
    const o = v as Record<string, unknown>;
    if (!o || typeof o !== 'object' || Array.isArray(o)) return void errors.push({ code: 'invalid_request', message: `Line ${line} is not a JSON object.`, line, param: null });
    if (typeof o.custom_id !== 'string' || !o.custom_id || o.custom_id.length > 512) return void errors.push({ code: 'missing_required_parameter', message: `Line ${line}: \`custom_id\` must be a non-empty string of at most 512 characters.`, line, param: 'custom_id' });
    if (seen.has(o.custom_id)) return void errors.push({ code: 'duplicate_custom_id', message: `Line ${line}: the custom_id '${o.custom_id}' is used by an earlier line.`, line, param: 'custom_id' });
    seen.add(o.custom_id);
    if (o.method !== 'POST') return void errors.push({ code: 'invalid_method', message: `Line ${line}: \`method\` must be "POST".`, line, param: 'method' });
    if (o.url !== endpoint) return void errors.push({ code: 'mismatched_url', message: `Line ${line}: \`url\` must be the batch's endpoint, ${endpoint}.`, line, param: 'url' });
    if (!o.body || typeof o.body !== 'object' || Array.isArray(o.body)) return void errors.push({ code: 'invalid_request', message: `Line ${line}: \`body\` must be a JSON object.`, line, param: 'body' });
    // nested deeper than a request body may be (the line's own request would be refused): storing it would overflow the stack
    try {
      assertParsedDepth(o.body);
    } catch (e) {
      return void errors.push({ code: 'invalid_request', message: `Line ${line}: ${(e as Error).message.replace('The request body', '`body`')}`, line, param: 'body' });
    }
    lines.push({ custom_id: o.custom_id, body: o.body as Record<string, unknown> });
  });
  return { lines, errors };
}
