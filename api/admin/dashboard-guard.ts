import crypto from 'crypto';
import type { Request, Response, NextFunction } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { operatorOf } from './console/auth';

/**
 * Job payloads hold prompts, so the queue dashboard is never open: it takes a platform admin's
 * console session (the console's sign-in; mount the console session in front), or HTTP basic auth
 * with ADMIN_DASHBOARD_PASSWORD (user `admin`) for scripts. Neither: 401.
 */
export async function dashboardGuard(req: Request, res: Response, next: NextFunction): Promise<void> {
  if (crossSite(req)) return next(new ApiError(403, 'cross_site_request', 'The queue dashboard takes changes only from its own pages.'));
  if (req.session && (await operatorOf(req))) return next();
  const expected = process.env.ADMIN_DASHBOARD_PASSWORD;
  const header = req.headers.authorization ?? '';
  const m = /^Basic\s+(.+)$/i.exec(header);
  const given = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const want = `admin:${expected ?? ''}`;
  if (expected && given.length === want.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(want))) return next();
  res.setHeader('WWW-Authenticate', 'Basic realm="queues"');
  next(new ApiError(401, 'unauthorized', 'Sign in to the operator console, or send the dashboard credentials.'));
}

/**
 * A change (anything but GET/HEAD) that a browser says came from another site. bull-board's API takes
 * no CSRF token, and a browser sends remembered basic-auth credentials with a cross-site form POST
 * (`/api/queues/{name}/add` adds a job) whatever the cookie's SameSite: such a request is refused by
 * what the browser reports, `Sec-Fetch-Site` (anything but `same-origin`, or `none` for a typed
 * address) or an `Origin` whose host is not this one. A client without either header (a script) passes.
 */
function crossSite(req: Request): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  const site = req.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') return true;
  const origin = req.get('origin');
  if (!origin) return false;
  try {
    return new URL(origin).host !== req.get('host');
  } catch {
    return true; // `Origin: null` (a sandboxed or file page) and anything unreadable
  }
}
