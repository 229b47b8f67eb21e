import { config, type Config } from './config/env';
import { logger } from './logger';
import { closeDb, db } from './db/sequelize';
import { forceExitAfter } from './shutdown';

/**
 * The main of an HTTP process type (web, admin): validate configuration, check the database,
 * start, and close cleanly on SIGTERM/SIGINT (stop accepting, finish open requests).
 */
export function runHttpProcess(name: string, start: (cfg: Config) => Promise<{ close(): Promise<void> }>, port: (cfg: Config) => number): void {
  (async () => {
    const cfg = config();
    await db().authenticate();
    const proc = await start(cfg);
    logger.info({ port: port(cfg), pod: cfg.podId }, `${name} listening`);
    const stop = async () => {
      forceExitAfter(cfg.shutdownGraceMs);
      await proc.close();
      await closeDb();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
  })().catch((err) => {
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  });
}
