/** A canonical UUID (8-4-4-4-12 hex digits), the only id shape Postgres' uuid columns accept. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a canonical UUID: check before a value reaches a uuid column (else Postgres errors, a 500). */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
