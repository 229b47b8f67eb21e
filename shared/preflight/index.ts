import type { Config } from '../config/env';
import { db } from '../db/sequelize';
import { logger } from '../logger';
import { StartupError } from '../startup/startup-error';
import type { Check } from './check';
import { checkRedis } from './redis';
import { checkMigrations, checkPostgres } from './postgres';

/**
 * The Redis the checks look at: REDIS_URL, or with a Redis Cluster (REDIS_CLUSTER_NODES) its first
 * listed node, whose settings stand for the others' (they are set alike; docs/deploy.md).
 */
export function redisToCheck(cfg: Config): string {
  const first = (process.env.REDIS_CLUSTER_NODES ?? '').split(',').map((s) => s.trim()).find(Boolean);
  if (!first) return cfg.redisUrl;
  const auth = (() => {
    try {
      const u = new URL(cfg.redisUrl);
      return u.password ? `${u.username}:${u.password}@` : '';
    } catch {
      return '';
    }
  })();
  return `redis://${auth}${first}`;
}

/** Redis, Postgres and the schema, checked the same way at every start and by `gateway doctor`. */
export async function preflight(cfg: Config, opts: { migrations?: boolean } = {}): Promise<Check[]> {
  const production = cfg.nodeEnv === 'production';
  const [redis, postgres] = await Promise.all([checkRedis(redisToCheck(cfg), production), checkPostgres(cfg.databaseUrl)]);
  const checks = [...redis, ...postgres];
  const pgUp = postgres.every((c) => c.name !== 'postgres' || c.status !== 'fail');
  if (opts.migrations !== false && pgUp) checks.push(await checkMigrations(db(cfg.databaseUrl)));
  return checks;
}

/**
 * Runs the preflight at a process's start: warnings are logged, the first failure is thrown as a
 * one-line StartupError (the process exits with it).
 */
export async function enforcePreflight(processName: string, cfg: Config, opts: { migrations?: boolean } = {}): Promise<void> {
  const checks = await preflight(cfg, opts);
  for (const c of checks) if (c.status === 'warn') logger.warn({ check: c.name, process: processName }, c.detail);
  const failed = checks.find((c) => c.status === 'fail');
  if (failed) throw new StartupError(failed.detail);
}
