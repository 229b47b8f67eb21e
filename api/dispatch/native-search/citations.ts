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

export interface FetchedDocument {
  url: string;
  title: string | null;
  content: string;
}

export interface CitedDocument {
  /** The page's position among the pages fetched in this answer (Anthropic's `document_index`). */
  index: number;
  doc: FetchedDocument;
  /** Where the URL appears in the text. */
  start: number;
  end: number;
  /** The cited span of the page: what the text quotes from it, else its opening. */
  charStart: number;
  charEnd: number;
}

/** Every page fetched before a text step, in order (the documents a text can cite). */
export function fetchedBefore(steps: NativeStep[], upto: number): FetchedDocument[] {
  const out: FetchedDocument[] = [];
  for (const s of steps.slice(0, upto)) {
    if (s.type === 'result' && s.outcome?.kind === 'fetch') out.push({ url: s.outcome.url, title: s.outcome.title ?? null, content: s.outcome.content });
  }
  return out;
}

const MAX_CITED = 150;

/**
 * The span of `content` that `quote` reproduces: the longest run of the quote's consecutive words
 * (at least three, of its first 20) found in the page, whitespace-insensitive; undefined if none.
 */
export function quotedSpan(content: string, quote: string): { start: number; end: number } | undefined {
  const words = quote.split(/\s+/).filter(Boolean).slice(0, 20);
  const find = (from: number, n: number) => new RegExp(words.slice(from, from + n).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+')).exec(content);
  let best: { start: number; end: number; n: number } | undefined;
  for (let i = 0; i + 3 <= words.length; i++) {
    let m = find(i, 3);
    if (!m) continue;
    let n = 3;
    for (; i + n < words.length; n++) {
      const longer = find(i, n + 1);
      if (!longer) break;
      m = longer;
    }
    if (!best || n > best.n) best = { start: m.index, end: m.index + m[0].length, n };
  }
  return best && { start: best.start, end: best.end };
}

/**
 * The fetched pages a model's text cites: each page whose URL the text mentions, once, with the
 * part of the page the text quotes after the mention (or the page's first characters).
 */
export function citedDocuments(text: string, docs: FetchedDocument[]): CitedDocument[] {
  const out: CitedDocument[] = [];
  const seen = new Set<string>();
  docs.forEach((doc, index) => {
    if (seen.has(doc.url)) return;
    const start = text.indexOf(doc.url);
    if (start < 0) return;
    seen.add(doc.url);
    const end = start + doc.url.length;
    const after = text.slice(end).replace(/^[\s:,.-]+/, '').split(/\n/)[0];
    const span = quotedSpan(doc.content, after) ?? { start: 0, end: Math.min(doc.content.length, MAX_CITED) };
    out.push({ index, doc, start, end, charStart: span.start, charEnd: Math.min(span.end, span.start + MAX_CITED) });
  });
  return out.sort((a, b) => a.start - b.start);
}
