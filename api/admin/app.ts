import express, { type Express } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { RedisClient } from '../../shared/redis/connection';
import { requestId } from '../middleware/request-id';
import { errorHandler } from '../middleware/error-handler';
import { healthRouter } from '../routes/health/router';
import { probesRouter } from '../../shared/health/probes';
import { Queues } from '../../shared/queues/queues';
import { ALL_QUEUES } from '../../shared/queues/names';
import { config } from '../../shared/config/env';
import { errors } from '../../shared/errors/codes';
import { dashboardGuard } from './dashboard-guard';
import { managementRouter } from './management';
import { bodyDeadline } from '../middleware/body-deadline';
import { consoleKit, consoleRouter } from './console/router';
import { webPages } from '../web/error-page';

/** The admin app (`{admin_url}`): health, metrics, the queue dashboard, the management API (`/admin/v1`) and the operator console (`/`). */
export function createAdminApp(deps: { redis: RedisClient; queues: Queues }): Express {
  const app = express();
  app.disable('x-powered-by');
  // Only the exact spelling of a path matches (the management routers are strict and case-sensitive too).
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('trust proxy', config().trustProxy); // req.ip: the client address failed authentications count against
  app.use(requestId);
  app.use(bodyDeadline(() => config().bodyReadTimeoutMs));
  app.use(healthRouter(deps));
  app.use(probesRouter({ redis: deps.redis }));

  const board = new ExpressAdapter();
  board.setBasePath('/admin/queues');
  // every shard of a sharded queue is a queue of its own on the board (`chat-interactive`, `chat-interactive-1`, ...)
  createBullBoard({ queues: ALL_QUEUES.flatMap((q) => deps.queues.shards(q)).map((q) => new BullMQAdapter(q)), serverAdapter: board });
  const kit = consoleKit(deps.redis);
  // the queue board's pages are never framed by another site (clickjacking on its retry/clean/remove buttons)
  const noFraming: express.RequestHandler = (_req, res, next) => {
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    next();
  };
  app.use('/admin/queues', noFraming, ...kit.sessionOnly, dashboardGuard, board.getRouter());
  app.use('/admin/v1', managementRouter(deps));
  const consolePages = webPages({ base: '', brand: 'Gateway operator console' }); // not the management API's paths
  app.use((req, res, next) => (req.path.startsWith('/admin/') ? next() : consolePages(req, res, next)));
  app.use(consoleRouter(deps.redis, kit));

  app.use((req, _res, next) => next(errors.notFound(`No route for ${req.method} ${req.path}.`)));
  app.use(errorHandler);
  return app;
}
