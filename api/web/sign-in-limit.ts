import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { RedisClient } from '../../shared/redis/connection';
import type { RequestHandler } from 'express';
import { config } from '../../shared/config/env';
import { ApiError } from '../../shared/errors/ApiError';

const WINDOW_MS = 15 * 60_000;

/**
 * Failed sign-ins per (client address, email) in 15 minutes, counted in Redis so every pod shares
 * the count; a successful sign-in does not count. Over the limit: 429 `too_many_sign_in_attempts`.
 */
export function signInLimit(redis: RedisClient, name: string): RequestHandler {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: () => config().webSignInMaxAttempts,
    skipSuccessfulRequests: true,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (req) => `${ipKeyGenerator(req.ip ?? '')}:${String((req.body as { email?: unknown } | undefined)?.email ?? '').trim().toLowerCase()}`,
    store: new RedisStore({
      prefix: `${config().redisPrefix}:web:sign-in-limit:${name}:`,
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
    }),
    handler: (_req, _res, next) =>
      next(new ApiError(429, 'too_many_sign_in_attempts', 'Too many failed sign-in attempts; wait 15 minutes and try again.', { retryAfter: WINDOW_MS / 1000 })),
  });
}
