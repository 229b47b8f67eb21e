import type { Request, Response, NextFunction } from 'express';

/**
 * A browser opening `{base_url}/` (it prefers text/html) is sent to the dashboard; API clients
 * (Accept: application/json, any type, or none) still get the JSON answer of the inference routes.
 */
export function browserRoot(req: Request, res: Response, next: NextFunction): void {
  if ((req.method === 'GET' || req.method === 'HEAD') && req.path === '/' && req.accepts(['application/json', 'text/html']) === 'text/html') {
    res.redirect(302, '/dashboard');
    return;
  }
  next();
}
