import type { Request } from 'express';
import type { AppContext } from '../context';
import { ApiError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';
import { TokenCountTimeout } from '../../shared/tokenizer/pool';
import { config } from '../../shared/config/env';

/**
 * Runs a local token count (`POST /v1/messages/count_tokens`, `POST /v1/responses/input_tokens`) in
 * its own lane: pool `tokenize`, lane `count_tokens`, COUNT_TOKENS_ORG_CONCURRENCY per org (429 with
 * Retry-After beyond it); a count past TOKEN_COUNT_TIMEOUT_MS is 413. No upstream, nothing billed.
 */
export async function countInLane(ctx: AppContext, req: Request, count: () => Promise<number>): Promise<number> {
  const admitted = await ctx.leases.acquire(req.auth!.orgId, 'tokenize', 'count_tokens', config().countTokensOrgConcurrency);
  if (!admitted.granted) throw errors.concurrencyLimit(admitted.retryAfterMs / 1000);
  try {
    return await count();
  } catch (err) {
    if (err instanceof TokenCountTimeout) throw new ApiError(413, 'payload_too_large', 'The request is too large to count its tokens in time.');
    throw err;
  } finally {
    void ctx.leases.release(admitted.lease).catch(() => undefined);
  }
}
