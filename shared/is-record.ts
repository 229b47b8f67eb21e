/** A JSON object (not null, not an array): what the provider adapters and the decision (systemone) answers read as an object. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
