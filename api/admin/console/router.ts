import { Router } from 'express';
import type { RedisClient } from '../../../shared/redis/connection';
import { STYLE } from '../../web/style';
import { webKit, type WebKit } from '../../web/session';
import { consoleAuthRoutes, requireOperator } from './auth';
import { consoleChrome, consolePages } from './pages';
import { setPageChrome } from '../../web/error-page';

/** The operator console at `{admin_url}/` (everything but `/admin/*`, which is the API and the queue dashboard). */
export function consoleRouter(redis: RedisClient, kit: WebKit = consoleKit(redis)): Router {
  const r = Router();
  r.use((req, _res, next) => next(req.path.startsWith('/admin/') ? 'router' : undefined));
  r.get('/assets/style.css', (_req, res) => void res.type('text/css').set('Cache-Control', 'public, max-age=3600').send(STYLE));
  r.use(...kit.middleware);
  r.use(consoleAuthRoutes(redis, kit));
  r.use(requireOperator, (req, res, next) => {
    setPageChrome(res, () => consoleChrome(req, res, kit, ''));
    next();
  }, consolePages(redis, kit));
  return r;
}

export const consoleKit = (redis: RedisClient): WebKit => webKit(redis, { name: 'console', cookiePath: '/' });
