import type { Request, Response, NextFunction } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { utcInstant } from '../../../shared/utc-instant';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A real calendar date in `YYYY-MM-DD` form. */
export function isVersionDate(v: string): boolean {
  return DATE.test(v) && utcInstant(v) !== undefined;
}

/** The messages dialect requires `anthropic-version: YYYY-MM-DD` (any real date is accepted). */
export function requireAnthropicVersion(req: Request, _res: Response, next: NextFunction): void {
  const raw = req.headers['anthropic-version'];
  const v = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!v) return next(new ApiError(400, 'anthropic_version_required', "The 'anthropic-version' header is required (a date such as 2023-06-01)."));
  if (!isVersionDate(v)) {
    return next(new ApiError(400, 'anthropic_version_invalid', `The 'anthropic-version' header must be a date in YYYY-MM-DD form; got '${v.slice(0, 40)}'.`));
  }
  next();
}
