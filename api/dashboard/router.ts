import { Router } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import type { Directory } from '../../shared/tenancy/directory';
import { STYLE } from '../web/style';
import { webKit } from '../web/session';
import { dashboardAuthRoutes } from './auth-routes';
import { orgPages } from './org-pages';
import { invitePage } from './invite-page';
import { requireViewer } from './member';
import { errors } from '../../shared/errors/codes';
import { setPageChrome } from '../web/error-page';

/** The organization dashboard, mounted at `{base_url}/dashboard` on the web process. */
export function dashboardRouter(deps: { redis: RedisClient; directory: Directory }): Router {
  const { redis } = deps;
  const r = Router();
  // Express mounts case-insensitively, but the session cookie's path (`/dashboard`) is matched as
  // written: any other spelling (`/DASHBOARD/...`) goes to the canonical one, with method and body (308)
  r.use((req, res, next) => (req.baseUrl === '/dashboard' ? next() : res.redirect(308, `/dashboard${req.url}`)));
  r.get('/assets/style.css', (_req, res) => void res.type('text/css').set('Cache-Control', 'public, max-age=3600').send(STYLE));
  const kit = webKit(redis, { name: 'dashboard', cookiePath: '/dashboard' });
  r.use(...kit.middleware);
  r.use(dashboardAuthRoutes(redis, kit));
  r.use(invitePage(kit, redis));
  r.use(requireViewer, (req, res, next) => {
    // an error page of a signed-in user keeps the user and sign-out (an organization's page: its tabs too, org-pages.ts)
    setPageChrome(res, () => ({ brand: 'Gateway dashboard', user: res.locals.viewer!.user.email, csrf: kit.csrfToken(req, res) }));
    next();
  }, orgPages(deps, kit));
  // a dashboard path no page answers is the dashboard's 404 (not the inference API's key check)
  r.use((req, _res, next) => next(errors.notFound(`No page at ${req.originalUrl.split('?')[0]}.`)));
  return r;
}
