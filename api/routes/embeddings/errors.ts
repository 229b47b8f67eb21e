import { ApiError } from '../../../shared/errors/ApiError';

/** The spec's embeddings and rerank validation codes (all 400). */
export type EmbeddingsCode =
  | 'invalid_input'
  | 'batch_too_large'
  | 'unknown_field'
  | 'invalid_query'
  | 'invalid_documents'
  | 'invalid_top_n'
  | 'input_too_long';

/** The field a message starts by quoting (`'input[2]' must be…`) is the error's `param` on the OpenAI path. */
const LEADING_FIELD = /^'([A-Za-z_][\w.[\]]*)'/;

export const invalid = (code: EmbeddingsCode, message: string) => new ApiError(400, code, message, { param: LEADING_FIELD.exec(message)?.[1] });

/** A body must be a plain object; every key outside `allowed` is refused by name. */
export function rejectUnknownFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(body).filter((k) => !allowed.includes(k));
  if (extra.length) throw invalid('unknown_field', `Unknown field${extra.length > 1 ? 's' : ''}: ${extra.slice(0, 10).map((k) => `'${k.slice(0, 64)}'`).join(', ')}.`);
}

/** `model`: a required non-empty string (checked before the catalog is asked). */
export function requireModel(body: Record<string, unknown>): string {
  const m = body.model;
  if (typeof m !== 'string' || m.length === 0) throw invalid('invalid_input', "'model' is required and must be a non-empty string.");
  return m;
}

/** What a value is, for messages. */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Whether `v` is an integer from `min` to `max`. */
export const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
