import type { Request, Response, NextFunction } from 'express';
import { errors } from '../../shared/errors/codes';
import { firstUnstorable } from '../../shared/text/storable';

/**
 * Refuses (400 `invalid_request`) a parsed JSON body holding NUL or a lone surrogate in any string or
 * field name, before a handler writes it: Postgres cannot store it, and the write would fail as a 500.
 */
export function storableBody(req: Request, _res: Response, next: NextFunction): void {
  const at = firstUnstorable(req.body);
  if (at) return next(errors.invalidRequest(`The body holds text that cannot be stored (NUL or an unpaired surrogate) at ${at}.`));
  next();
}
