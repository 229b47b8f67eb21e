import escapeHtml from 'escape-html';

/** Markup that is already safe (built by `html`); anything else interpolated is escaped. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | boolean | null | undefined | Part[];

const render = (p: Part): string =>
  p === null || p === undefined || p === false ? '' : Array.isArray(p) ? p.map(render).join('') : p instanceof Html ? p.value : escapeHtml(String(p));

/** Tagged template for pages: every interpolated value is HTML-escaped unless it is itself `html`. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Trusted markup built in code (e.g. an SVG chart whose text parts were escaped). */
export const raw = (s: string) => new Html(s);
