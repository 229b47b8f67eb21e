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
