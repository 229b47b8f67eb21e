import path from 'path';
import { ensureRedis } from './redis';
import { ensurePostgres, ensureDatabase } from './postgres';
import type { Started } from './redis';

export interface Services {
  databaseUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

export interface ServiceProfile {
  /** Folder for embedded data, e.g. `.data/dev`. */
  dataDir: string;
  redisPort: number;
  pgPort: number;
  database: string;
  /** Drop and create the database (tests). */
  recreate?: boolean;
}

export const DEV_PROFILE: ServiceProfile = { dataDir: '.data/dev', redisPort: 6380, pgPort: 5433, database: 'gateway' };
export const TEST_PROFILE: ServiceProfile = { dataDir: '.data/test', redisPort: 6381, pgPort: 5434, database: 'gateway_test', recreate: true };

/**
 * Redis and Postgres for `npm start` and `npm test`: the given URLs when set, otherwise started here.
 * With DATABASE_URL set, the profile's database is created on that server when missing.
 */
export async function ensureServices(p: ServiceProfile, root = process.cwd()): Promise<Services> {
  const started: Started[] = [];
  try {
    const redis = await ensureRedis(p.redisPort, p.recreate ? undefined : path.resolve(root, p.dataDir, 'redis'));
    started.push(redis);
    const pg = await ensurePostgres(path.resolve(root, p.dataDir, 'pg'), p.pgPort);
    started.push(pg);
    const databaseUrl = process.env.DATABASE_URL && !p.recreate ? process.env.DATABASE_URL : await ensureDatabase(pg.url, p.database, p.recreate);
    return {
      databaseUrl,
      redisUrl: redis.url,
      stop: async () => {
        for (const s of started.reverse()) await s.stop().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    throw err;
  }
}
