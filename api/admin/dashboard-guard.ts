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
