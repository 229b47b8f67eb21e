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
