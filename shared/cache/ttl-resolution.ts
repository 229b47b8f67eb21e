/**
 * How long lru-cache may reuse its clock reading: a hundredth of the TTL, at most 100 ms. Its default
 * (1 ms) sets a timer every millisecond a lookup happens in, about one per request under load (issue
 * 29, docs/benchmark.md); an entry then lives its TTL give or take 1 %, and the cache epoch, not the
 * TTL, is what makes a change visible.
 */
export function ttlResolutionOf(ttlMs: number): number {
  return Math.max(1, Math.min(100, Math.floor(ttlMs / 100)));
}

/** An LRU cache's `ttl` with its `ttlResolution` (ttlResolutionOf), so the two never disagree. */
export function ttlOptions(ttlMs: number): { ttl: number; ttlResolution: number } {
  return { ttl: ttlMs, ttlResolution: ttlResolutionOf(ttlMs) };
}
