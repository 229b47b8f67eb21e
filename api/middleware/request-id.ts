import crypto from 'crypto';
import type { Request, Response, NextFunction } from 'express';

const ID_BYTES = 12;
const POOL_IDS = 512;
let pool = Buffer.alloc(0);
let offset = 0;

/** 24 random hex characters; entropy is drawn for 512 ids at a time (one system call, not one per request). */
function randomHex(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = crypto.randomBytes(ID_BYTES * POOL_IDS);
    offset = 0;
  }
  offset += ID_BYTES;
  return pool.toString('hex', offset - ID_BYTES, offset);
}

/** Every response carries `x-service-request-id`, errors and unknown paths included. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const id = `req_${randomHex()}`;
  req.id = id;
  res.setHeader('x-service-request-id', id);
  next();
}
