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

/**
 * Waits until at least `msLeft` of the current minute remain (at most `msLeft` and a second: past that the minute has turned), so that the requests a
 * rate test sends next fall in one minute window (rpm and tpm count fixed minutes: crossing into the
 * next one resets the count, and a request the test expects refused would be served). True when there is room.
 */
export function roomInMinute(msLeft = 10_000): Promise<boolean> {
  return waitFor(() => 60_000 - (Date.now() % 60_000) > msLeft, msLeft + 1000, 100);
}
