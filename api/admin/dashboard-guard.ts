import crypto from 'crypto';
import type { Request, Response, NextFunction } from 'express';
import { ApiError } from '../../shared/errors/ApiError';

/**
 * Job payloads hold prompts, so the queue dashboard is never open: it needs HTTP basic auth with
 * the password ADMIN_DASHBOARD_PASSWORD (user `admin`). Unset, the dashboard is closed.
 */
export function dashboardGuard(req: Request, res: Response, next: NextFunction): void {
  const expected = process.env.ADMIN_DASHBOARD_PASSWORD;
  const header = req.headers.authorization ?? '';
  const m = /^Basic\s+(.+)$/i.exec(header);
  const given = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const want = `admin:${expected ?? ''}`;
  if (expected && given.length === want.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(want))) return next();
  res.setHeader('WWW-Authenticate', 'Basic realm="queues"');
  next(new ApiError(401, 'unauthorized', 'Dashboard credentials required.'));
}
