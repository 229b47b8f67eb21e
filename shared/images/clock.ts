/**
 * The time images are judged by (retention, signed-URL expiry). Production reads the system clock;
 * tests may move it forward to see an image or a signature expire without waiting seven days.
 * The shift is refused outside NODE_ENV=test, so no setting can skew it in production.
 */
let shiftMs = 0;

export function imageNow(): number {
  return Date.now() + shiftMs;
}

export function shiftImageClock(ms: number): void {
  if (process.env.NODE_ENV !== 'test') throw new Error('The image clock can only be shifted in tests.');
  shiftMs = ms;
}

/** Images expire this long after creation (spec: 7 days). */
export const IMAGE_RETENTION_MS = 7 * 24 * 3600 * 1000;
