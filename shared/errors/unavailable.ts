import { ApiError } from './ApiError';

/** Seconds a client waits before retrying while a backing store is away. */
const RETRY_AFTER_S = 2;

/** ioredis errors of a connection that is down (not a command Redis refused). */
const REDIS_DOWN = /^(Connection is closed|Stream isn't writeable|Reached the max retries per request limit)/;
/** Sequelize wraps pg connection failures in these. */
const SEQUELIZE_DOWN = new Set([
  'SequelizeConnectionError',
  'SequelizeConnectionRefusedError',
  'SequelizeConnectionAcquireTimeoutError',
  'SequelizeConnectionTimedOutError',
  'SequelizeHostNotFoundError',
  'SequelizeHostNotReachableError',
]);
/** Socket errors of pg (and anything else) that cannot reach its server. */
const SOCKET_DOWN = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE', '57P01', '57P03']);

/**
 * A Redis or Postgres outage seen by a request: a retryable 503 `service_unavailable` with
 * `Retry-After`, instead of a 500. Anything else: undefined.
 */
export function asUnavailable(err: unknown): ApiError | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { name?: string; message?: string; code?: string; parent?: { code?: string } };
  const down =
    e.name === 'MaxRetriesPerRequestError' ||
    REDIS_DOWN.test(e.message ?? '') ||
    SEQUELIZE_DOWN.has(e.name ?? '') ||
    SOCKET_DOWN.has(e.code ?? '') ||
    SOCKET_DOWN.has(e.parent?.code ?? '') ||
    /^Connection terminated/.test(e.message ?? '');
  if (!down) return undefined;
  return new ApiError(503, 'service_unavailable', 'The service is temporarily unavailable; retry shortly.', { retryAfter: RETRY_AFTER_S });
}
