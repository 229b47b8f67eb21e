import { ValidationError } from 'sequelize';
import { config } from '../../shared/config/env';
import { db, closeDb } from '../../shared/db/sequelize';
import { createRedis, type RedisClient } from '../../shared/redis/connection';
import { explainPostgres, explainRedis } from '../../shared/startup/explain';
import { StartupError } from '../../shared/startup/startup-error';

const EMBEDDED = 'for the embedded default, start it with npm start';
const REDIS_WAIT_MS = 5000;

/** Pings Redis once; a stopped server is one line naming REDIS_URL and npm start, not a raw ECONNREFUSED. */
async function reachRedis(redis: RedisClient, url: string): Promise<void> {
  let seen: Error | undefined;
  const onError = (e: Error) => (seen ??= e);
  redis.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([redis.ping(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${REDIS_WAIT_MS / 1000} s`)), REDIS_WAIT_MS)))]);
  } catch (err) {
    throw new StartupError(`${explainRedis(seen ?? err, url).message}; ${EMBEDDED}`, err);
  } finally {
    clearTimeout(timer);
    redis.off('error', onError);
  }
}

/** Runs a CLI action with Postgres and Redis connected, and closes them after. */
export async function withServices<T>(fn: (redis: RedisClient) => Promise<T>): Promise<T> {
  const cfg = config();
  const redis = createRedis('command');
  try {
    await db().authenticate().catch((err: unknown) => {
      throw new StartupError(`${explainPostgres(err, cfg.databaseUrl).message}; ${EMBEDDED}`, err);
    });
    await reachRedis(redis, cfg.redisUrl);
    return await fn(redis);
  } finally {
    redis.disconnect();
    await closeDb();
  }
}

/** What went wrong, in one line: Sequelize's bare "Validation error" is replaced by what it found. */
export function describeFailure(err: unknown): string {
  if (err instanceof ValidationError && err.errors?.length) return err.errors.map((e) => e.message).join('; ');
  return ((err as Error)?.message ?? String(err)).split('\n')[0];
}

export function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
