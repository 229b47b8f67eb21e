import crypto from 'crypto';
import type { Request, Response, NextFunction } from 'express';

/** Every response carries `x-service-request-id`, errors and unknown paths included. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const id = `req_${crypto.randomBytes(12).toString('hex')}`;
  req.id = id;
  res.setHeader('x-service-request-id', id);
  next();
}
