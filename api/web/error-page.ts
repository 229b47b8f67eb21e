import type { Request, RequestHandler, Response } from 'express';
import { html } from './html';
import { page, type PageChrome } from './layout';
import { merged } from '../../shared/merged';

interface PageArea {
  /** Where the interface lives (`/dashboard` or ``): its stylesheet and its home link. */
  base: string;
  brand: string;
}

const AREA = Symbol('webPageArea');
const CHROME = Symbol('webPageChrome');

/** What a signed-in page shows around its body (tabs, user, sign-out, banner); the brand may be the org's. */
export type SignedInChrome = Omit<PageChrome, 'title' | 'base'>;

/**
 * Says what an error page of this request shows around it once the caller is known to be signed in:
 * the same tabs and sign-out as the interface's other pages, instead of a bare page.
 */
export function setPageChrome(res: Response, chrome: () => SignedInChrome): void {
  (res.locals as Record<symbol, unknown>)[CHROME] = chrome;
}

/** The signed-in chrome set for this request, if any (a failure to make it leaves the page bare). */
export function pageChromeOf(res: Response): SignedInChrome | undefined {
  const make = (res.locals as Record<symbol, (() => SignedInChrome) | undefined>)[CHROME];
  try {
    return make?.();
  } catch {
    return undefined;
  }
}

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
export function errorPage(area: PageArea, status: number, code: string, message: string, chrome?: SignedInChrome): string {
  const title = TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'Error');
  return page(merged(chrome ?? { brand: area.brand }, { title, base: area.base }),
    html`<div class="card" data-test="error-page" data-code="${code}"><h1>${title}</h1><p class="error" role="alert">${message}</p>
<p class="muted">HTTP ${status} · <code>${code}</code></p><p><a href="${area.base || '/'}">Back to the start page</a></p></div>`);
}
