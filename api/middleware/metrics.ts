import type { Request, Response, NextFunction } from 'express';
import { httpDuration, LabelCache } from '../../shared/metrics';

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

/** Label objects by method, mount, route pattern and status, built once each (at most 2,000: routes times methods times statuses). */
const labelSets = new LabelCache<{ method: string; route: string; status: string }>(2_000);

/** Mounts whose path carries a parameter (an API key, a plan, an org): their labels are not kept by spelling. */
const PARAMETER_MOUNT = /^\/(a|r|dashboard)\//i;

function labelsOf(req: Request, status: number): { method: string; route: string; status: string } {
  if (PARAMETER_MOUNT.test(req.baseUrl)) return { method: req.method, route: routeLabel(req), status: String(status) };
  // mounts spelled in other cases are the only variety beyond the routes
  const key = req.route?.path ? `${req.method} ${status} ${req.baseUrl} ${req.route.path}` : `${req.method} ${status}`;
  return labelSets.get(key) ?? labelSets.keep(key, { method: req.method, route: routeLabel(req), status: String(status) });
}

/**
 * Records every request's duration, labelled by its route pattern (`routeLabel`), method and status.
 * The labels of each route, method and status are one object made once (no `startTimer` closure,
 * no label objects merged per request, no route pattern rebuilt by regular expressions per request).
 */
export function httpMetrics(req: Request, res: Response, next: NextFunction): void {
  const started = performance.now();
  res.on('finish', () => httpDuration.observe(labelsOf(req, res.statusCode), (performance.now() - started) / 1000));
  next();
}
