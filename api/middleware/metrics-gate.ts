import crypto from 'crypto';
import type { Request, Response, NextFunction } from 'express';
import { config } from '../../shared/config/env';
import { ApiError } from '../../shared/errors/ApiError';
import { bearerChallenge, errors } from '../../shared/errors/codes';

const sameSecret = (a: string, b: string) => {
  const x = crypto.createHash('sha256').update(a).digest();
  const y = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(x, y);
};

/**
 * `/metrics` on the public port is nobody's business but the operator's: it answers only with
 * `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise), and is 404 when no token is set. The
 * admin port, worker metrics ports and METRICS_PORT (api/server.ts) serve it without a token.
 */
export function publicMetricsGate(req: Request, res: Response, next: NextFunction): void {
  const token = config().metricsToken;
  if (!token) return next(errors.notFound(`No route for ${req.method} ${req.path}.`));
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (m && sameSecret(m[1], token)) return next();
  next(new ApiError(401, 'invalid_metrics_token', 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.', { headers: bearerChallenge(m !== null) }));
}
