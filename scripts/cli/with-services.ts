import { config } from '../../shared/config/env';
import { db, closeDb } from '../../shared/db/sequelize';
import { createRedis } from '../../shared/redis/connection';

/** Runs a CLI action with Postgres and Redis connected, and closes them after. */
export async function withServices<T>(fn: (redis: ReturnType<typeof createRedis>) => Promise<T>): Promise<T> {
  config();
  const redis = createRedis('command');
  try {
    await db().authenticate();
    return await fn(redis);
  } finally {
    redis.disconnect();
    await closeDb();
  }
}

export function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
