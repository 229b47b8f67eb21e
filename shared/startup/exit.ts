import { StartupError } from './startup-error';

/**
 * Ends a process that could not start: one line on stderr naming the cause and the fix, exit 1.
 * The stack (and the underlying error's) only with LOG_LEVEL=debug or trace.
 */
export function exitOnStartupError(name: string, err: unknown): never {
  const line = err instanceof StartupError ? err.message : ((err as Error)?.message ?? String(err)).split('\n')[0];
  process.stderr.write(`${name} cannot start: ${line}\n`);
  if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') {
    process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
    const cause = (err as StartupError).cause as Error | undefined;
    if (cause?.stack) process.stderr.write(`caused by: ${cause.stack}\n`);
  }
  process.exit(1);
}
