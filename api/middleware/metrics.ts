import type { Request, Response, NextFunction } from 'express';
import { httpDuration } from '../../shared/metrics';

/** Records every request's duration, labelled by the matched route pattern (never the raw path). */
export function httpMetrics(req: Request, res: Response, next: NextFunction): void {
  const end = httpDuration.startTimer({ method: req.method });
  res.on('finish', () => {
    const route = req.route?.path ? `${req.baseUrl.replace(/^\/(a|r)\/[^/]+(\/p\/[^/]+)?/, '/$1')}${req.route.path}` : 'unmatched';
    end({ route, status: String(res.statusCode) });
  });
  next();
}
