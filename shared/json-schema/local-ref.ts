import { isRecord } from '../is-record';

/**
 * Whether a `$ref` names something in its own document: `#` (the root, OpenAI's recursion) or a JSON
 * Pointer fragment (`#/$defs/step`, RFC 6901: `~1` is `/`, `~0` is `~`, the fragment percent-decoded)
 * that reaches a schema (an object or a boolean). Any other reference (an anchor `#name`, another
 * document) is taken as resolving: OpenAI's answer to one is not known.
 */
export function refResolves(root: Record<string, unknown>, ref: string): boolean {
  if (ref === '#' || !ref.startsWith('#/')) return true;
  let at: unknown = root;
  for (const token of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return false;
    }
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) >= at.length) return false;
      at = at[Number(key)];
    } else if (isRecord(at) && Object.prototype.hasOwnProperty.call(at, key)) {
      at = at[key];
    } else {
      return false;
    }
  }
  return isRecord(at) || typeof at === 'boolean';
}
