import express, { type Express } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Redis } from 'ioredis';
import { requestId } from '../middleware/request-id';
import { errorHandler } from '../middleware/error-handler';
import { healthRouter } from '../routes/health/router';
import { Queues } from '../../shared/queues/queues';
import { ALL_QUEUES } from '../../shared/queues/names';
import { errors } from '../../shared/errors/codes';
import { dashboardGuard } from './dashboard-guard';
import { managementRouter } from './management';
import { consoleKit, consoleRouter } from './console/router';

/** The admin app (`{admin_url}`): health, metrics, the queue dashboard, the management API (`/admin/v1`) and the operator console (`/`). */
export function createAdminApp(deps: { redis: Redis; queues: Queues }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestId);
  app.use(healthRouter(deps));

  const board = new ExpressAdapter();
  board.setBasePath('/admin/queues');
  createBullBoard({ queues: ALL_QUEUES.map((q) => new BullMQAdapter(deps.queues.get(q))), serverAdapter: board });
  const kit = consoleKit(deps.redis);
  app.use('/admin/queues', ...kit.sessionOnly, dashboardGuard, board.getRouter());
  app.use('/admin/v1', managementRouter(deps));
  app.use(consoleRouter(deps.redis, kit));

  app.use((req, _res, next) => next(errors.notFound(`No route for ${req.method} ${req.path}.`)));
  app.use(errorHandler);
  return app;
}
