/**
 * `{ ...a, ...b }`, for the objects a request's path makes. V8 (Node 20) gives an object made by a
 * spread followed by properties of its own (`{ ...a, k: v }`) a hidden class of its own every time
 * (its map is copied, not found in a transition tree): about ten times slower to make, a map and a
 * descriptor array in the old generation per object, and inline caches that read it never settle.
 * `Object.assign` into a fresh literal shares its maps. Not for an object parsed from a caller's JSON
 * (an own `__proto__` key would become the copy's prototype): there, withJsonKey (docs/benchmark.md,
 * seventh session).
 */
export function merged<A extends object, B extends object>(a: A, b: B): Omit<A, keyof B> & B {
  return Object.assign({}, a, b) as Omit<A, keyof B> & B;
}

/**
 * A copy of `o`, an object of a caller's JSON, with `key` set to `value`, its keys in their order: a
 * spread alone (an own `__proto__` key of parsed JSON stays a key, where Object.assign would make it
 * the copy's prototype), then a set, never a spread followed by keys (merged above).
 */
export function withJsonKey(o: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...o };
  copy[key] = value;
  return copy;
}
