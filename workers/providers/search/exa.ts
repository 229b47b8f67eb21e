import type { SearchAdapter } from './types';
import { callProvider, joinUrl, jsonBody, malformed } from './call';
import { isoDay, scoreOf, str } from './normalize';

interface ExaResponse {
  results?: Array<{ title?: unknown; url?: unknown; text?: unknown; highlights?: unknown; summary?: unknown; score?: unknown; publishedDate?: unknown }>;
}

const SNIPPET_CHARS = 500;

/**
 * Exa search: `POST {base}/search` with `x-api-key` and a JSON body
 * `{ query, numResults, contents: { text: { maxCharacters } } }`. `numResults` 1-100. Results are
 * `results[]` with `title` (may be null), `url`, `text`, `score` (not always sent: then from rank)
 * and `publishedDate` (ISO date-time). A user's country goes as `userLocation` (2-letter code).
 */
export const exa: SearchAdapter = {
  kind: 'exa',
  count: { min: 1, max: 100, default: 10 },
  async search(call) {
    const res = await callProvider(
      'exa',
      joinUrl(call.baseUrl, '/search'),
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': call.apiKey },
        body: JSON.stringify({ query: call.query, numResults: call.count, contents: { text: { maxCharacters: SNIPPET_CHARS } }, ...(call.country ? { userLocation: call.country } : {}) }),
      },
      call,
    );
    const body = await jsonBody<ExaResponse>('exa', res);
    if (!body || typeof body !== 'object' || !Array.isArray(body.results)) throw malformed('exa');
    const rows = body.results;
    return rows.slice(0, call.count).map((r, i) => {
      const published = isoDay(r.publishedDate);
      const highlights = Array.isArray(r.highlights) ? r.highlights.filter((h): h is string => typeof h === 'string').join(' … ') : '';
      const snippet = (str(r.text) || highlights || str(r.summary)).slice(0, SNIPPET_CHARS);
      return { title: str(r.title), url: str(r.url), snippet, ...(published ? { published_date: published } : {}), score: scoreOf(r.score, i, rows.length) };
    });
  },
};
