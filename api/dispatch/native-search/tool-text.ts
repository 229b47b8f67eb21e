import type { FetchResult, SearchResult } from '../../../shared/search/types';

/** What the model reads as the result of a search call. */
export function searchText(r: Pick<SearchResult, 'query' | 'provider' | 'results'>): string {
  if (!r.results.length) return `No web results for "${r.query}".`;
  const lines = r.results.map((x, i) => [`[${i + 1}] ${x.title}`, x.url, x.published_date ? `Published: ${x.published_date}` : '', x.snippet].filter(Boolean).join('\n'));
  return `Web results for "${r.query}":\n\n${lines.join('\n\n')}`;
}

/** What the model reads as the result of a fetch call. */
export function fetchText(r: Pick<FetchResult, 'url' | 'title' | 'content'>): string {
  return [`Fetched ${r.url}`, r.title ? `Title: ${r.title}` : '', '', r.content].filter((l, i) => l !== '' || i === 2).join('\n');
}

/** An in-band failure: the model sees the gateway's code and can go on without the result. */
export function errorText(code: string, message: string): string {
  return `Error: ${code}: ${message}`;
}
