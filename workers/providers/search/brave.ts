import type { SearchAdapter } from './types';
import { callProvider, joinUrl, jsonBody, malformed } from './call';
import { isoDay, plain, scoreOf, str } from './normalize';

interface BraveResponse {
  web?: { results?: Array<{ title?: unknown; url?: unknown; description?: unknown; page_age?: unknown }> };
}

/**
 * Brave Search web search: `GET {base}/res/v1/web/search?q=&count=` with `X-Subscription-Token`.
 * `count` 1-20. Results are `web.results[]` with `title`, `url`, `description` (may carry `<strong>`)
 * and `page_age` (ISO date-time, when Brave knows one). Brave sends no score: it is derived from rank.
 * A query with no hits has no `web` object at all: an empty answer. A user's country goes as
 * `country` (2-letter code).
 */
export const brave: SearchAdapter = {
  kind: 'brave',
  count: { min: 1, max: 20, default: 10 },
  async search(call) {
    const url = new URL(joinUrl(call.baseUrl, '/res/v1/web/search'));
    url.searchParams.set('q', call.query);
    url.searchParams.set('count', String(call.count));
    if (call.country) url.searchParams.set('country', call.country);
    const res = await callProvider('brave', url.toString(), { method: 'GET', headers: { accept: 'application/json', 'x-subscription-token': call.apiKey } }, call);
    const body = await jsonBody<BraveResponse>('brave', res);
    if (!body || typeof body !== 'object') throw malformed('brave');
    const rows = body.web?.results ?? [];
    if (!Array.isArray(rows)) throw malformed('brave');
    return rows.slice(0, call.count).map((r, i) => {
      const published = isoDay(r.page_age);
      return { title: str(r.title), url: str(r.url), snippet: plain(str(r.description)), ...(published ? { published_date: published } : {}), score: scoreOf(undefined, i, rows.length) };
    });
  },
};
