import { logger } from './logger';

/** Exits with status 1 if a graceful shutdown has not finished in `ms` (a dependency that is gone can hang it). */
export function forceExitAfter(ms: number): void {
  setTimeout(() => {
    logger.error({ ms }, 'shutdown did not finish in time; exiting');
    process.exit(1);
  }, ms).unref();
}
