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

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
