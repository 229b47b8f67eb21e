import crypto from 'crypto';
import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import { RedisStore, type RedisReply, type SendCommandClusterDetails } from 'rate-limit-redis';
import { isCluster, type RedisClient } from '../../shared/redis/connection';
import type { Request, RequestHandler, Response } from 'express';
import { config } from '../../shared/config/env';
import { ApiError } from '../../shared/errors/ApiError';

const WINDOW_MS = 15 * 60_000;

/**
 * Failed sign-ins in 15 minutes, counted in Redis so every pod shares the counts; a successful
 * sign-in does not count. Two limits, the first checked first: per client address whatever the email
 * (`WEB_SIGNIN_MAX_PER_ADDRESS`: one address trying many emails), then per (address, email)
 * (`WEB_SIGNIN_MAX_ATTEMPTS`). Over either: 429 `too_many_sign_in_attempts`, and the password is not
 * checked.
 */
export function signInLimit(redis: RedisClient, name: string, failed?: (res: Response) => boolean): RequestHandler[] {
  const email = (req: Request) => String((req.body as { email?: unknown } | undefined)?.email ?? '').trim().toLowerCase();
  return [
    limiter(redis, `${name}:address`, () => config().webSignInMaxPerAddress, (req) => ipKeyGenerator(req.ip ?? ''), failed),
    limiter(redis, name, () => config().webSignInMaxAttempts, (req) => `${ipKeyGenerator(req.ip ?? '')}:${email(req)}`, failed),
  ];
}

/** `failed`: which answers count as a failed attempt (default: any status from 400). */
function limiter(redis: RedisClient, name: string, limit: () => number, keyGenerator: (req: Request) => string, failed?: (res: Response) => boolean): RequestHandler {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit,
    skipSuccessfulRequests: true,
    ...(failed ? { requestWasSuccessful: (_req: Request, res: Response) => !failed(res) } : {}),
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator,
    store: new RedisStore({
      prefix: `${config().redisPrefix}:web:sign-in-limit:${name}:`,
      ...(isCluster(redis)
        ? { sendCommandCluster: (d: SendCommandClusterDetails) => clusterCommand(redis, d.command) }
        : { sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply> }),
    }),
    handler: (_req, _res, next) =>
      next(new ApiError(429, 'too_many_sign_in_attempts', 'Too many failed sign-in attempts; wait 15 minutes and try again.', { retryAfter: WINDOW_MS / 1000 })),
  });
}

/**
 * The store loads its scripts with `SCRIPT LOAD` (no key, so a cluster client sends it to any node)
 * and runs them with `EVALSHA` on the node that owns the counter's key: on a Redis Cluster a failed
 * sign-in then met NOSCRIPT, and the store's one retry loaded the script on a random node again (an
 * answer of 500 for about half the addresses). Scripts are loaded on every master instead, and the
 * SHA1 Redis would answer is computed here.
 */
async function clusterCommand(redis: RedisClient, command: string[]): Promise<RedisReply> {
  const [name, ...args] = command;
  if (isCluster(redis) && name.toUpperCase() === 'SCRIPT' && args[0]?.toUpperCase() === 'LOAD') {
    // Before the client knows the masters (at start) none is loaded: the NOSCRIPT retry loads them then.
    await Promise.allSettled(redis.nodes('master').map((n) => n.call('SCRIPT', ...args)));
    return crypto.createHash('sha1').update(args[1]).digest('hex');
  }
  return redis.call(name, ...args) as Promise<RedisReply>;
}
