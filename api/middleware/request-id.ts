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

/**
 * Every response carries `x-service-request-id` (the spec), errors and unknown paths included, and
 * the same id under the names the official SDKs read: `x-request-id` (openai: `request_id`,
 * `APIError.requestID`) and `request-id` (@anthropic-ai/sdk: the same two).
 */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const id = `req_${randomHex()}`;
  req.id = id;
  res.setHeader('x-service-request-id', id);
  res.setHeader('x-request-id', id);
  res.setHeader('request-id', id);
  next();
}
