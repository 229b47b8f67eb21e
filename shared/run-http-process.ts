import { config, type Config } from './config/env';
import { logger } from './logger';
import { closeDb } from './db/sequelize';
import { forceExitAfter } from './shutdown';
import { enforcePreflight } from './preflight';
import { markDraining } from './health/readiness';
import { exitOnStartupError } from './startup/exit';

/**
 * The main of an HTTP process type (web, admin): validate configuration, run the preflight (Redis,
 * Postgres, migrations), start, and close cleanly on SIGTERM/SIGINT (readyz 503, stop accepting,
 * finish open requests). A failure to start is one line on stderr and exit 1.
 */
export function runHttpProcess(name: string, start: (cfg: Config) => Promise<{ close(): Promise<void> }>, port: (cfg: Config) => number): void {
  runProcess(name, start, (cfg) => [{ port: port(cfg), pod: cfg.podId }, `${name} listening`]);
}

/** `runHttpProcess` for any process type: `started` is the line logged once it runs (process, fields). */
export function runProcess(name: string, start: (cfg: Config) => Promise<{ close(): Promise<void> }>, started: (cfg: Config) => [Record<string, unknown>, string]): void {
  (async () => {
    const cfg = config();
    await enforcePreflight(name, cfg);
    const proc = await start(cfg);
    const stop = async () => {
      markDraining();
      forceExitAfter(cfg.shutdownGraceMs);
      await proc.close();
      await closeDb();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
    // Only now: whoever waits for this line (a supervisor, a test) may send SIGTERM at once.
    const [fields, line] = started(cfg);
    logger.info(fields, line);
  })().catch((err) => exitOnStartupError(name, err));
}
