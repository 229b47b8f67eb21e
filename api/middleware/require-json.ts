import type { Request, Response, NextFunction } from 'express';
import { errors } from '../../shared/errors/codes';

/** JSON endpoints refuse other content types with 415 and a missing/empty body with 400. */
export function requireJson(req: Request, _res: Response, next: NextFunction): void {
  if (!req.is('application/json')) return next(errors.unsupportedMediaType('application/json'));
  if (req.body === undefined || req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
    return next(errors.invalidRequest('The request body must be a JSON object.'));
  }
  next();
}
