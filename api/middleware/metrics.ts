import type { Request, Response, NextFunction } from 'express';
import { httpDuration } from '../../shared/metrics';

/**
 * Records every request's duration, labelled by the matched route pattern (never the raw path). The
 * prefixes are mounted case-insensitively (`/A/{key}/...` routes too), so the key is cut in any case.
 */
export function httpMetrics(req: Request, res: Response, next: NextFunction): void {
  const end = httpDuration.startTimer({ method: req.method });
  res.on('finish', () => {
    const route = req.route?.path ? `${req.baseUrl.replace(/^\/(a|r)\/[^/]+(\/p\/[^/]+)?/i, (_m, p: string) => `/${p.toLowerCase()}`)}${req.route.path}` : 'unmatched';
    end({ route, status: String(res.statusCode) });
  });
  next();
}
