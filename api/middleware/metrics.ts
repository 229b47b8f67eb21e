import type { Request, Response, NextFunction } from 'express';
import { httpDuration } from '../../shared/metrics';

/**
 * The matched route pattern of a request, never its spelling: `req.baseUrl` is the path as the caller
 * wrote it up to the router's mount, and mounts match case-insensitively with their parameters
 * (an API key, a routing plan, an org slug, percent-encoded or not) in it. So the mount is lowercased
 * and its parameters replaced by their names: one label per route, however many ways a caller spells
 * it (a label per spelling grew `/metrics` without bound).
 */
export function routeLabel(req: Request): string {
  if (!req.route?.path) return 'unmatched';
  const base = req.baseUrl
    .toLowerCase()
    .replace(/^\/(a|r)\/[^/]+(\/p\/[^/]+)?/, (_m, p: string) => `/${p}`)
    .replace(/^\/dashboard\/o\/[^/]+/, '/dashboard/o/:org');
  return `${base}${req.route.path}`;
}

/** Records every request's duration, labelled by its route pattern (`routeLabel`), method and status. */
export function httpMetrics(req: Request, res: Response, next: NextFunction): void {
  const end = httpDuration.startTimer({ method: req.method });
  res.on('finish', () => end({ route: routeLabel(req), status: String(res.statusCode) }));
  next();
}
