import express, { Router, type Express } from 'express';
import type { AppContext } from './context';
import { requestId } from './middleware/request-id';
import { errorHandler } from './middleware/error-handler';
import { httpMetrics } from './middleware/metrics';
import { publicMetricsGate } from './middleware/metrics-gate';
import { pathKey, pathRoutingPlan, pathWithoutKey } from './middleware/path-auth';
import { inferenceRouter } from './routes/index';
import { healthRouter } from './routes/health/router';
import { probesRouter } from '../shared/health/probes';
import { signedImagesRouter } from './routes/images/signed';
import { config } from '../shared/config/env';
import { errors } from '../shared/errors/codes';
import { bodyDeadline } from './middleware/body-deadline';
import { dashboardRouter } from './dashboard/router';
import { webPages } from './web/error-page';
import { browserRoot } from './middleware/browser-root';
import { traceRequest } from './middleware/trace-request';
import { tracingOn } from '../shared/tracing/trace';
import { requestLogger } from './middleware/request-log';
import { hotPaths } from './middleware/hot-paths';

/** The inference app (`{base_url}`), without listening: tests mount it on an ephemeral port. */
export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', config().trustProxy); // req.ip: the client address failed authentications count against
  app.use(requestId);
  if (tracingOn()) app.use(traceRequest); // mounted only when tracing is on: no cost otherwise
  app.use(httpMetrics);
  app.use(requestLogger(ctx)); // the request log row of a request no job delivered (api/middleware/request-log.ts)
  app.use('/metrics', publicMetricsGate); // any spelling express routes to /metrics
  app.use(bodyDeadline(() => config().bodyReadTimeoutMs));
  const inference = inferenceRouter(ctx);
  // The path is quoted without a path-authentication key (`/a/{api_key}/...`): a secret is never echoed.
  const notFound: express.RequestHandler = (req, _res, next) =>
    next(errors.notFound(`No route for ${req.method} ${pathWithoutKey(req.originalUrl)}.`));
  app.use(hotPaths(inference, notFound)); // the busiest inference paths skip the walk over the routers below
  app.use(healthRouter(ctx));
  app.use(probesRouter({ redis: ctx.redis, subscribers: [ctx.sub] }));
  app.use(signedImagesRouter()); // signed image bytes: the signature authorises, not an API key

  app.use(browserRoot); // a browser at {base_url}/ goes to the dashboard
  app.use('/dashboard', webPages({ base: '/dashboard', brand: 'Gateway dashboard' }), dashboardRouter(ctx)); // the org dashboard's pages (api/dashboard/)

  const mounted = (...pre: express.RequestHandler[]) => Router({ mergeParams: true }).use(...pre, inference, notFound);

  app.use('/a/:apiKey/p/:project', mounted(pathKey));
  app.use('/a/:apiKey', mounted(pathKey));
  app.use('/r/:routingPlanId', mounted(pathRoutingPlan));
  app.use(inference);
  app.use(notFound);
  app.use(errorHandler);
  return app;
}
