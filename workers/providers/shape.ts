import { isRecord } from '../../shared/is-record';

/**
 * Checks of an upstream answer's shape, for the adapters: an answer that is valid JSON but not of the
 * shape its API documents (`data: null`, a choice that is a number, a delta that is missing) is refused
 * as malformed (`errors.upstreamError`), as unparsable JSON is, before any field is read; never a
 * TypeError thrown halfway through reading it. A JSON object is `isRecord` (shared/is-record.ts).
 */

/** Absent (undefined or null) or a JSON object. */
export function optRecord(v: unknown): boolean {
  return v === undefined || v === null || isRecord(v);
}

/** An array of JSON objects. */
export function isRecords(v: unknown): v is Record<string, unknown>[] {
  return Array.isArray(v) && v.every(isRecord);
}

/** Absent (undefined or null) or an array of JSON objects. */
export function optRecords(v: unknown): boolean {
  return v === undefined || v === null || isRecords(v);
}

/**
 * A token count as an upstream reports it: a non-negative integer, or one written as a string of
 * digits ("12", as some proxies send it). Anything else (negative, fractional, beyond 2^53, `NaN`,
 * an object) is no count: `undefined`. Billing sums these; a string summed is concatenated, and a
 * count that is not a non-negative integer made the usage event unstorable or a credit.
 */
export function tokenCount(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string' || !/^\s*\d{1,15}\s*$/.test(v)) return undefined;
  return Number(v);
}
