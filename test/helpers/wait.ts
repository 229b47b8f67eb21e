/** Polls `check` until it returns a truthy value or `ms` pass; returns the last value. */
export async function waitFor<T>(check: () => T | Promise<T>, ms = 5000, every = 25): Promise<T> {
  const end = Date.now() + ms;
  let v = await check();
  while (!v && Date.now() < end) {
    await new Promise((r) => setTimeout(r, every));
    v = await check();
  }
  return v;
}

/** The nearest-rank percentile: the smallest value at least `p`% of the samples do not exceed. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
}
