/** NUL, or a UTF-16 surrogate without its pair: text Postgres refuses (text and jsonb) or would corrupt. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorable(s: string): boolean {
  return !UNSTORABLE.test(s);
}

/**
 * Where the first string or object key of a parsed JSON value that Postgres cannot store sits
 * (`a.b[2]`, `a field name in a`), or undefined. Iterative, so a deeply nested body cannot overflow
 * the stack.
 */
export function firstUnstorable(value: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorable(v)) return at || '(body)';
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => stack.push([x, `${at}[${i}]`]));
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (!isStorable(k)) return `a field name${at ? ` in ${at}` : ''}`;
        stack.push([x, at ? `${at}.${k}` : k]);
      }
    }
  }
  return undefined;
}

/** A string made storable for a record that must be written whatever it holds (the audit log): NUL and lone surrogates escaped. */
export function storable(s: string): string {
  return s.replace(new RegExp(UNSTORABLE.source, 'g'), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
