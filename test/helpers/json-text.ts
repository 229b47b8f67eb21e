/** A reply body's JSON, or undefined when it is empty or not JSON (the raw text is kept beside it). */
export function jsonOrUndefined(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
