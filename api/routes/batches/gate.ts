import type { Request } from 'express';
import Joi from 'joi';
import { ApiError } from '../../../shared/errors/ApiError';
import { sha256Hex } from '../../../shared/crypto';
import { presentedKeys } from '../../middleware/authenticate';
import { batchLimits } from '../../../shared/batches/limits';
import { activeBatchCount } from '../../../shared/batches/store';
import { config } from '../../../shared/config/env';

/** OpenAI's file expiration policy (`expires_after` of an upload, `output_expires_after` of a batch): anchor `created_at`, 1 hour to 30 days. */
export const expiresAfterSchema = Joi.object({
  anchor: Joi.string().valid('created_at').required(),
  seconds: Joi.number().integer().min(3600).max(2_592_000).required(),
});

/** The refusals a new batch can meet before anything is stored (docs/batches.md, "Limits"). */
export async function admitBatch(req: Request, lines: number, dialect: 'openai' | 'anthropic'): Promise<{ priceMultiplier: number; keyHash: string; createdAt: Date; expiresAt: Date }> {
  const auth = req.auth!;
  const limits = batchLimits(auth.org, dialect);
  if (lines > limits.maxLines) {
    throw new ApiError(400, 'batch_too_many_lines', `A batch may hold at most ${limits.maxLines} requests for this organization; this one has ${lines}.`);
  }
  if ((await activeBatchCount(auth.orgId)) >= limits.maxInProgress) {
    throw new ApiError(429, 'batch_limit_exceeded', `This organization already has ${limits.maxInProgress} batches in progress; wait for one to end.`, { retryAfter: 60 });
  }
  const now = Date.now();
  return { priceMultiplier: limits.priceMultiplier, keyHash: sha256Hex(presentedKeys(req).gatewayKey!), createdAt: new Date(now), expiresAt: new Date(now + config().batches.windowMs) };
}

/** A list's page size (default 20): OpenAI's batches 1..100, Message Batches 1..1000, files 1..10,000 (OpenAI's, default 10,000). */
export function pageLimit(v: unknown, max = 100, byDefault = 20): number {
  if (v === undefined) return byDefault;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new ApiError(400, 'invalid_request', `\`limit\` must be an integer from 1 to ${max}.`, { param: 'limit' });
  return n;
}

/**
 * A list's text parameter (`after`, `before_id`, `purpose`, `order`): one value. A key given twice
 * (`after=a&after=b`, an array once parsed) is the caller's mistake, refused with its name.
 */
export function queryText(query: Request['query'], name: string): string | undefined {
  const v = query[name];
  if (v === undefined || typeof v === 'string') return v;
  throw new ApiError(400, 'invalid_request', `\`${name}\` must be given once, as one value.`, { param: name });
}

/** A list's `order`: `asc` or `desc`, `fallback` when absent; anything else 400 naming it. */
export function queryOrder(query: Request['query'], fallback: 'asc' | 'desc'): 'asc' | 'desc' {
  const order = queryText(query, 'order') ?? fallback;
  if (order !== 'asc' && order !== 'desc') throw new ApiError(400, 'invalid_request', '`order` must be `asc` or `desc`.', { param: 'order' });
  return order;
}

/**
 * A list's array parameter (`include`, `lifecycle`): every value given as `name[]=…` (the official
 * SDKs' brackets form) or `name=…`, once or repeated, in that order; none when absent.
 */
export function queryValues(query: Request['query'], name: string): unknown[] {
  return [query[`${name}[]`], query[name]].flatMap((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
}
