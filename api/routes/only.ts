import type { Router, Request, Response, NextFunction } from 'express';
import { errors } from '../../shared/errors/codes';

type Handler = (req: Request, res: Response, next: NextFunction) => unknown;
type Methods = Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', Handler | Handler[]>>;

/**
 * Registers handlers for a path and answers 405 (with `Allow`) for every other method on it.
 * Express 5 forwards rejected promises to the error handler, so handlers may be async.
 */
export function only(router: Router, path: string, methods: Methods): void {
  const allowed = Object.keys(methods).map((m) => m.toUpperCase());
  if (allowed.includes('GET')) allowed.push('HEAD');
  for (const [method, handler] of Object.entries(methods)) {
    const list = Array.isArray(handler) ? handler : [handler];
    (router as unknown as Record<string, (p: string, ...h: Handler[]) => void>)[method](path, ...list);
  }
  router.all(path, (req, res, next) => {
    if (allowed.includes(req.method)) return next();
    res.setHeader('Allow', allowed.join(', '));
    next(errors.methodNotAllowed(req.method));
  });
}
