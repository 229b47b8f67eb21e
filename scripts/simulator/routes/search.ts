import crypto from 'crypto';
import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults } from '../faults';

/**
 * Three web search APIs, each under its own base path so one simulator can stand in for all three
 * (seeded base URLs: `{sim}/brave`, `{sim}/tavily`, `{sim}/exa`). Knobs are keyed `search:<provider>`;
 * `searchResults` forces the number of hits (0: an empty answer). A key starting with `invalid` is
 * refused with 401 and an error that quotes the key, as some providers do, so tests can check that
 * the gateway never passes it on.
 */
interface Hit {
  title: string;
  url: string;
  text: string;
  score: number;
  date?: Date;
}

function hits(query: string, n: number): Hit[] {
  const slug = crypto.createHash('sha256').update(query).digest('hex').slice(0, 8);
  return Array.from({ length: n }, (_, i) => ({
    title: `Result ${i + 1} for ${query}`,
    url: `https://example.com/${slug}/${i + 1}`,
    text: `A page about ${query}, number ${i + 1}.`,
    score: Math.round((0.99 - i * 0.03) * 1000) / 1000,
    // every other hit is dated (a fixed day, shifted by rank)
    date: i % 2 === 0 ? new Date(Date.UTC(2025, 0, 15 + i, 10, 30)) : undefined,
  }));
}

function count(knobs: { searchResults?: number }, asked: number): number {
  return knobs.searchResults !== undefined ? knobs.searchResults : asked;
}

function refused(key: string | undefined): boolean {
  return !key || key.startsWith('invalid');
}

export function searchRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();

  // Brave Search: GET /res/v1/web/search?q=&count=, X-Subscription-Token
  r.get('/brave/res/v1/web/search', async (req: Request, res: Response) => {
    log.record(req, res);
    const token = req.headers['x-subscription-token'] as string | undefined;
    if (refused(token)) {
      return void res.status(401).json({ type: 'ErrorResponse', error: { code: 'SUBSCRIPTION_TOKEN_INVALID', detail: `The provided subscription token ${token ?? ''} is invalid.`, status: 401 } });
    }
    const k = knobs.take('search:brave');
    if (await applyFaults(k, res)) return;
    const q = typeof req.query.q === 'string' ? req.query.q : '';
    const c = req.query.count === undefined ? 20 : Number(req.query.count);
    if (!q || !Number.isInteger(c) || c < 1 || c > 20) {
      return void res.status(422).json({ type: 'ErrorResponse', error: { code: 'VALIDATION', detail: 'Unable to validate request parameter(s)', status: 422 } });
    }
    const list = hits(q, count(k, c));
    res.json({
      type: 'search',
      query: { original: q },
      ...(list.length
        ? {
            web: {
              type: 'search',
              results: list.map((h) => ({
                type: 'search_result',
                title: h.title,
                url: h.url,
                description: h.text.replace(q, `<strong>${q}</strong>`),
                ...(h.date ? { page_age: h.date.toISOString().slice(0, 19), age: 'January 15, 2025' } : {}),
              })),
            },
          }
        : {}),
    });
  });

  // Tavily: POST /search, Authorization: Bearer, { query, max_results }
  r.post('/tavily/search', async (req: Request, res: Response) => {
    log.record(req, res);
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (refused(m?.[1])) return void res.status(401).json({ detail: { error: `Unauthorized: invalid API key ${m?.[1] ?? ''}.` } });
    const k = knobs.take('search:tavily');
    if (await applyFaults(k, res)) return;
    const body = (req.body ?? {}) as { query?: unknown; max_results?: unknown };
    const c = body.max_results === undefined ? 5 : body.max_results;
    if (typeof body.query !== 'string' || !body.query || typeof c !== 'number' || !Number.isInteger(c) || c < 0 || c > 20) {
      return void res.status(400).json({ detail: { error: 'Invalid request: query is required and max_results must be 0-20.' } });
    }
    const list = hits(body.query, count(k, c));
    res.json({
      query: body.query,
      answer: null,
      images: [],
      results: list.map((h) => ({ title: h.title, url: h.url, content: h.text, score: h.score, raw_content: null, ...(h.date ? { published_date: h.date.toUTCString() } : {}) })),
      response_time: 0.01,
    });
  });

  // Exa: POST /search, x-api-key, { query, numResults, contents }
  r.post('/exa/search', async (req: Request, res: Response) => {
    log.record(req, res);
    const key = req.headers['x-api-key'] as string | undefined;
    if (refused(key)) return void res.status(401).json({ requestId: crypto.randomUUID(), error: `Invalid API key: ${key ?? ''}`, tag: 'INVALID_API_KEY' });
    const k = knobs.take('search:exa');
    if (await applyFaults(k, res)) return;
    const body = (req.body ?? {}) as { query?: unknown; numResults?: unknown };
    const c = body.numResults === undefined ? 10 : body.numResults;
    if (typeof body.query !== 'string' || !body.query || typeof c !== 'number' || !Number.isInteger(c) || c < 1 || c > 100) {
      return void res.status(400).json({ requestId: crypto.randomUUID(), error: 'numResults must be an integer between 1 and 100', tag: 'INVALID_REQUEST_BODY' });
    }
    const list = hits(body.query, count(k, c));
    res.json({
      requestId: crypto.randomUUID(),
      resolvedSearchType: 'neural',
      results: list.map((h, i) => ({
        id: h.url,
        title: i === 1 ? null : h.title,
        url: h.url,
        score: h.score,
        ...(h.date ? { publishedDate: h.date.toISOString() } : {}),
        author: null,
        text: h.text,
      })),
      costDollars: { total: 0.005 },
    });
  });
  return r;
}
