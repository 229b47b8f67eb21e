import { StartupError } from './startup-error';

/** `host:port` of a URL, without its credentials. */
export function where(url: string | undefined): string {
  if (!url) return 'the configured address';
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol.startsWith('redis') ? '6379' : '5432')}`;
  } catch {
    return 'the configured address';
  }
}

const codeOf = (err: unknown): string | undefined => {
  const e = err as { code?: string; parent?: { code?: string }; original?: { code?: string } } | undefined;
  return e?.code ?? e?.parent?.code ?? e?.original?.code;
};

/** Redis connection and authentication failures, as one line naming REDIS_URL. */
export function explainRedis(err: unknown, url: string | undefined): StartupError {
  const msg = (err as Error)?.message ?? String(err);
  const at = where(url);
  if (/NOAUTH|WRONGPASS|invalid password|invalid username/i.test(msg)) {
    return new StartupError(`Redis at ${at} refused authentication (${msg.split(/\s/)[0]}): put the right user and password in REDIS_URL (redis://USER:PASSWORD@host:port)`, err);
  }
  const code = codeOf(err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new StartupError(`Redis host in REDIS_URL (${at}) does not resolve (${code}): fix REDIS_URL`, err);
  return new StartupError(`Redis at ${at} is unreachable (${code ?? msg}): start Redis there or set REDIS_URL to where it runs`, err);
}

/** Postgres connection and authentication failures, as one line naming DATABASE_URL. */
export function explainPostgres(err: unknown, url: string | undefined): StartupError {
  const code = codeOf(err);
  const at = where(url);
  let user = 'the user';
  let database = 'the database';
  try {
    const u = new URL(url ?? '');
    user = `user '${decodeURIComponent(u.username)}'`;
    database = `database '${u.pathname.slice(1)}'`;
  } catch {
    /* keep the generic words */
  }
  if (code === '28P01' || code === '28000') return new StartupError(`Postgres at ${at} refused the login of ${user} (${code}): fix the user and password in DATABASE_URL`, err);
  if (code === '3D000') return new StartupError(`Postgres at ${at} has no ${database}: create it (createdb) or fix DATABASE_URL`, err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new StartupError(`Postgres host in DATABASE_URL (${at}) does not resolve (${code}): fix DATABASE_URL`, err);
  const detail = code ?? ((err as Error)?.message ?? String(err)).split('\n')[0];
  return new StartupError(`Postgres at ${at} is unreachable (${detail}): start Postgres there or set DATABASE_URL to where it runs`, err);
}

/** A port another process holds, naming the variable that moves ours. */
export function explainListen(err: unknown, port: number, variable: string): StartupError {
  const code = codeOf(err);
  if (code === 'EADDRINUSE') return new StartupError(`port ${port} is already in use: stop what listens there or set ${variable} to a free port`, err);
  if (code === 'EACCES') return new StartupError(`port ${port} needs privileges this process lacks: set ${variable} to a port above 1023`, err);
  return new StartupError(`cannot listen on port ${port} (${code ?? (err as Error)?.message}): set ${variable} to a free port`, err);
}
