import type { Request, RequestHandler, Response } from 'express';
import { html } from './html';
import { page } from './layout';

interface PageArea {
  /** Where the interface lives (`/dashboard` or ``): its stylesheet and its home link. */
  base: string;
  brand: string;
}

const AREA = Symbol('webPageArea');

/**
 * Marks the requests of a web interface's routes (dashboard, console): their errors become an HTML
 * page for a browser (one that prefers HTML to JSON), while the JSON API keeps its envelope.
 */
export function webPages(area: PageArea): RequestHandler {
  return (_req, res, next) => {
    (res.locals as Record<symbol, PageArea>)[AREA] = area;
    next();
  };
}

/** The page area of a request whose client wants an HTML page, else undefined. */
export function pageAreaOf(req: Request, res: Response): PageArea | undefined {
  const area = (res.locals as Record<symbol, PageArea | undefined>)[AREA];
  return area && req.accepts(['json', 'html']) === 'html' ? area : undefined;
}

const TITLES: Record<number, string> = { 400: 'Bad request', 401: 'Not signed in', 403: 'Not allowed', 404: 'Not found', 410: 'No longer valid', 429: 'Too many attempts' };

/** The HTML error page: the same status and code as the JSON envelope, the message, a way back. */
export function errorPage(area: PageArea, status: number, code: string, message: string): string {
  const title = TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'Error');
  return page({ title, base: area.base, brand: area.brand },
    html`<div class="card" data-test="error-page" data-code="${code}"><h1>${title}</h1><p class="error" role="alert">${message}</p>
<p class="muted">HTTP ${status} · <code>${code}</code></p><p><a href="${area.base || '/'}">Back to the start page</a></p></div>`);
}
