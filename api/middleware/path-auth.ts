import type { Request, Response, NextFunction } from 'express';

/** Path authentication (`/a/{api_key}/...`, `/a/{api_key}/p/{project}/...`) is deprecated. */
export function pathKey(req: Request, res: Response, next: NextFunction): void {
  req.pathAuth = { apiKey: String(req.params.apiKey), project: req.params.project ? String(req.params.project) : undefined };
  res.setHeader('Deprecation', 'true');
  next();
}

/** Routing-plan entry point: `/r/{routing_plan_id}/...`. */
export function pathRoutingPlan(req: Request, _res: Response, next: NextFunction): void {
  req.pathAuth = { routingPlanId: String(req.params.routingPlanId) };
  next();
}

/**
 * The path prefix a request came in on, canonically spelled: `/a/{key}`, `/a/{key}/p/{project}`,
 * `/r/{routing_plan_id}`, or `''`. A URL the gateway hands back for the caller to fetch (a Message
 * Batch's `results_url`) keeps it, so a client whose key is in the path can follow it.
 */
export function pathPrefix(req: Request): string {
  const a = req.pathAuth;
  if (a?.apiKey) return `/a/${encodeURIComponent(a.apiKey)}${a.project ? `/p/${encodeURIComponent(a.project)}` : ''}`;
  if (a?.routingPlanId) return `/r/${encodeURIComponent(a.routingPlanId)}`;
  return '';
}

/**
 * A request's path as quoted in errors and traces: a path-authentication key never appears, however
 * the path is spelled (`/a/{key}`, `//a//{key}`, `/A/{key}`; express may not route the odd
 * spellings, but they still reach the 404 and the span).
 */
export function pathWithoutKey(url: string): string {
  return url.split('?')[0].replace(/^\/+a\/+[^/]+/i, '/a/{api_key}');
}
