import { ValidationError } from 'sequelize';
import { config } from '../../shared/config/env';
import { db, closeDb } from '../../shared/db/sequelize';
import { createRedis, type RedisClient } from '../../shared/redis/connection';
import { explainPostgres, explainRedis } from '../../shared/startup/explain';
import { StartupError } from '../../shared/startup/startup-error';

const EMBEDDED = 'for the embedded default, start it with npm start';

/**
 * Runs a CLI action with Postgres and Redis connected, and closes them after. Postgres is checked
 * first; Redis only when the command uses it (reading keys or usage works with Redis stopped). A
 * stopped service is one line naming its variable and npm start, never a raw ECONNREFUSED.
 */
export async function withServices<T>(fn: (redis: RedisClient) => Promise<T>): Promise<T> {
  const cfg = config();
  const redis = createRedis('command');
  let redisError: Error | undefined;
  redis.on('error', (e: Error) => (redisError = e));
  try {
    await db().authenticate().catch((err: unknown) => {
      throw new StartupError(`${explainPostgres(err, cfg.databaseUrl).message}; ${EMBEDDED}`, err);
    });
    return await fn(redis);
  } catch (err) {
    if (redisError && redis.status !== 'ready' && !(err instanceof StartupError)) {
      throw new StartupError(`${explainRedis(redisError, cfg.redisUrl).message}; ${EMBEDDED}`, err);
    }
    throw err;
  } finally {
    redis.disconnect();
    await closeDb();
  }
}

/**
 * What went wrong, in one line: Sequelize's bare "Validation error" is replaced by what it found, and
 * a message of several lines (a heading, then `  - ` items: an invalid catalog file's) keeps its items.
 */
export function describeFailure(err: unknown): string {
  if (err instanceof ValidationError && err.errors?.length) return err.errors.map((e) => e.message).join('; ');
  const [head, ...items] = ((err as Error)?.message ?? String(err)).split('\n').map((l) => l.trim().replace(/^- /, '')).filter(Boolean);
  return items.length ? `${head} ${items.join('; ')}` : (head ?? 'failed');
}

export function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
