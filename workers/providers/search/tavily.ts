import type { SearchAdapter } from './types';
import { callProvider, joinUrl, jsonBody, malformed } from './call';
import { isoDay, scoreOf, str } from './normalize';

interface TavilyResponse {
  results?: Array<{ title?: unknown; url?: unknown; content?: unknown; score?: unknown; published_date?: unknown }>;
}

/**
 * Tavily search: `POST {base}/search` with `Authorization: Bearer <key>` and a JSON body
 * `{ query, max_results, search_depth: 'basic' }`. `max_results` 0-20 (the gateway asks for at least 1).
 * Results are `results[]` with `title`, `url`, `content` (the snippet), `score` (0-1) and, for news,
 * `published_date`. A user's country goes as `country`, which Tavily takes as the country's English
 * name in lower case (e.g. `germany`), for the default `general` topic.
 */
export const tavily: SearchAdapter = {
  kind: 'tavily',
  count: { min: 1, max: 20, default: 5 },
  async search(call) {
    const res = await callProvider(
      'tavily',
      joinUrl(call.baseUrl, '/search'),
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${call.apiKey}` },
        body: JSON.stringify({ query: call.query, max_results: call.count, search_depth: 'basic', ...(call.country ? { country: countryName(call.country) } : {}) }),
      },
      call,
    );
    const body = await jsonBody<TavilyResponse>('tavily', res);
    if (!body || typeof body !== 'object' || !Array.isArray(body.results)) throw malformed('tavily');
    const rows = body.results;
    return rows.slice(0, call.count).map((r, i) => {
      const published = isoDay(r.published_date);
      return { title: str(r.title), url: str(r.url), snippet: str(r.content), ...(published ? { published_date: published } : {}), score: scoreOf(r.score, i, rows.length) };
    });
  },
};

const regions = new Intl.DisplayNames(['en'], { type: 'region' });

/** An ISO 3166-1 alpha-2 code as Tavily's country value (the English name, lower case). */
export function countryName(code: string): string {
  return (regions.of(code) ?? code).toLowerCase();
}
