import type { NativeStep } from './loop';

export interface CitedSource {
  url: string;
  title: string;
  snippet: string;
  /** Where the URL appears in the text. */
  start: number;
  end: number;
}

/** Every search result seen before a text step, in order (for citations). */
export function resultsBefore(steps: NativeStep[], upto: number): Array<{ url: string; title: string; snippet: string }> {
  const out: Array<{ url: string; title: string; snippet: string }> = [];
  for (const s of steps.slice(0, upto)) {
    if (s.type === 'result' && s.outcome?.kind === 'search') for (const r of s.outcome.results) out.push({ url: r.url, title: r.title, snippet: r.snippet });
  }
  return out;
}

/**
 * The sources a model's text cites: each search result whose URL the text mentions (the model is
 * told to cite URLs), once, in order of first mention.
 */
export function citedSources(text: string, results: Array<{ url: string; title: string; snippet: string }>): CitedSource[] {
  const seen = new Set<string>();
  const out: CitedSource[] = [];
  for (const r of results) {
    if (seen.has(r.url)) continue;
    const start = text.indexOf(r.url);
    if (start < 0) continue;
    seen.add(r.url);
    out.push({ ...r, start, end: start + r.url.length });
  }
  return out.sort((a, b) => a.start - b.start);
}
